package checks

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/diffusion-check/diffusion-check/results"
)

// The checks of the server's API contract that SGLang's harness makes on every case by
// default (testcase_configs.py DiffusionTestCase: run_models_api_check and
// run_t2v_input_reference_check, both True; test_server_common.py _test_v1_models_endpoint,
// _test_t2v_rejects_input_reference, pandalee99/sglang @ cce0a1244, 2026-08-23).
const (
	APIModels            = "api.models"
	APIModelID           = "api.model_id"
	APIT2VInputReference = "api.t2v_input_reference"
)

// Answer is one HTTP answer the runner got: its status and body (bounded), or Err when none
// came.
type Answer struct {
	Status int
	Body   []byte
	Err    error
}

// ModelsAnswers are the three answers of the models check: GET /v1/models, GET
// /v1/models/{id} for the id the list gave, and GET /v1/models/non_existent_model.
type ModelsAnswers struct {
	List, One, Unknown Answer
}

// ModelsWant is what the served model must report: its GPU count. Its id is the check of
// its own, ModelID.
type ModelsWant struct {
	NumGPUs int
}

// ExpectedModel is the id /v1/models must name, and where that expectation comes from
// ("expected_model_id", "--served-model-name", "--model-id", "--model-path"); an empty ID
// expects nothing.
type ExpectedModel struct {
	ID, From string
}

// modelCard is the part of SGLang's DiffusionModelCard the check reads; a missing field is
// told apart from an empty one by the pointers.
type modelCard struct {
	ID           *string `json:"id"`
	Object       *string `json:"object"`
	NumGPUs      *int    `json:"num_gpus"`
	TaskType     *string `json:"task_type"`
	DitPrecision *string `json:"dit_precision"`
	VAEPrecision *string `json:"vae_precision"`
}

// ModelsAPI is SGLang's _test_v1_models_endpoint: /v1/models answers 200 with object "list"
// and at least one model card of object "model" with an id, whose num_gpus is the server's,
// and which has task_type, dit_precision and vae_precision (whether the id is the expected
// one is api.model_id, ModelID, so that a wrong id hides none of these);
// /v1/models/{id} answers 200 with the same id, object and task_type; an unknown id answers
// 404 with error.code "model_not_found". The first assertion that fails is the check's
// detail, as SGLang stops there. SGLang also compares task_type with the task type of the
// model in its registry; diffusion-check does not know the registry and compares the two
// answers with each other (reading).
func ModelsAPI(a ModelsAnswers, want ModelsWant) results.Check {
	c := results.Check{Name: APIModels, Status: results.Pass}
	m, why := listedCard(a.List, want)
	if why == "" {
		why = retrievedCard(a.One, m)
	}
	if why == "" {
		why = unknownModel(a.Unknown)
	}
	if why != "" {
		c.Status, c.Detail, c.Cause = results.Fail, why, "/v1/models contract"
		return c
	}
	c.Detail = fmt.Sprintf("model %s, task_type %s, num_gpus %d; an unknown id answers 404 model_not_found", *m.ID, *m.TaskType, *m.NumGPUs)
	return c
}

// listedCard checks GET /v1/models and returns its first card, or why it fails.
func listedCard(a Answer, want ModelsWant) (modelCard, string) {
	if a.Err != nil {
		return modelCard{}, fmt.Sprintf("GET /v1/models: %v", a.Err)
	}
	if a.Status != 200 {
		return modelCard{}, fmt.Sprintf("/v1/models failed: %d %s", a.Status, snippet(a.Body))
	}
	var list struct {
		Object string      `json:"object"`
		Data   []modelCard `json:"data"`
	}
	if err := json.Unmarshal(a.Body, &list); err != nil {
		return modelCard{}, fmt.Sprintf("/v1/models: not JSON: %v", err)
	}
	if list.Object != "list" {
		return modelCard{}, fmt.Sprintf("Expected object='list', got %q", list.Object)
	}
	if len(list.Data) == 0 {
		return modelCard{}, "Expected at least one model in response"
	}
	m := list.Data[0]
	switch {
	case m.ID == nil:
		return m, "Model missing 'id' field"
	case m.Object == nil || *m.Object != "model":
		return m, fmt.Sprintf("Expected object='model', got %s", strOrMissing(m.Object))
	case m.NumGPUs == nil:
		return m, "Model missing 'num_gpus' field"
	case m.TaskType == nil:
		return m, "Model missing 'task_type' field"
	case m.DitPrecision == nil:
		return m, "Model missing 'dit_precision' field"
	case m.VAEPrecision == nil:
		return m, "Model missing 'vae_precision' field"
	case *m.NumGPUs != want.NumGPUs:
		return m, fmt.Sprintf("num_gpus mismatch: expected %d, got %d", want.NumGPUs, *m.NumGPUs)
	}
	return m, ""
}

// ModelID is the id half of SGLang's _test_v1_models_endpoint: the first model card of GET
// /v1/models (list) names the expected model, the case's expected_model_id (web4hub/Sgl @
// 4e66c7cc testcase_configs.py) or else the served model name the server's command implies
// (SGLang's served_model_name defaults to --model-id, else --model-path: server_args.py). It
// is skipped when nothing is expected or the list has no card id (api.models says why).
func ModelID(list Answer, want ExpectedModel) results.Check {
	c := results.Check{Name: APIModelID}
	if want.ID == "" {
		c.Status, c.Detail = results.Skip, "nothing to compare with: the case sets no expected_model_id and the server's command names no model"
		return c
	}
	id := ""
	if list.Err == nil && list.Status == 200 {
		id = ModelIDOf(list.Body)
	}
	switch {
	case id == "":
		c.Status, c.Detail = results.Skip, fmt.Sprintf("not compared with %s (%s): GET /v1/models gave no model id (see api.models)", want.ID, want.From)
	case id != want.ID:
		c.Status, c.Cause = results.Fail, "/v1/models names another model"
		c.Detail = fmt.Sprintf("Model ID mismatch: GET /v1/models names %q, expected %q (%s)", id, want.ID, want.From)
	default:
		c.Status, c.Detail = results.Pass, fmt.Sprintf("GET /v1/models names %q (%s)", id, want.From)
	}
	return c
}

// retrievedCard checks GET /v1/models/{id} against the listed card m; "" when it passes.
func retrievedCard(a Answer, m modelCard) string {
	if a.Err != nil {
		return fmt.Sprintf("GET /v1/models/%s: %v", *m.ID, a.Err)
	}
	if a.Status != 200 {
		return fmt.Sprintf("/v1/models/%s failed: %d %s", *m.ID, a.Status, snippet(a.Body))
	}
	var one modelCard
	if err := json.Unmarshal(a.Body, &one); err != nil {
		return fmt.Sprintf("/v1/models/%s: not JSON: %v", *m.ID, err)
	}
	switch {
	case one.ID == nil || *one.ID != *m.ID:
		return fmt.Sprintf("Single model ID mismatch: expected %s, got %s", *m.ID, strOrMissing(one.ID))
	case one.Object == nil || *one.Object != "model":
		return fmt.Sprintf("Single model object type mismatch: got %s", strOrMissing(one.Object))
	case one.NumGPUs == nil:
		return "Single model missing 'num_gpus' field"
	case one.TaskType == nil:
		return "Single model missing 'task_type' field"
	case *one.TaskType != *m.TaskType:
		return fmt.Sprintf("Single model task_type mismatch: expected %s, got %s", *m.TaskType, *one.TaskType)
	}
	return ""
}

// unknownModel checks that GET /v1/models/non_existent_model answers 404 model_not_found.
func unknownModel(a Answer) string {
	if a.Err != nil {
		return fmt.Sprintf("GET /v1/models/non_existent_model: %v", a.Err)
	}
	if a.Status != 404 {
		return fmt.Sprintf("Expected 404, got %d (GET /v1/models/non_existent_model)", a.Status)
	}
	var e struct {
		Error *struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(a.Body, &e); err != nil || e.Error == nil {
		return "404 response missing 'error' field"
	}
	if e.Error.Code != "model_not_found" {
		return fmt.Sprintf("Incorrect error code: %q", e.Error.Code)
	}
	return ""
}

// TaskTypeOf is the task_type of the first model card of a /v1/models body, "" when it has
// none: the T2V check runs only for a T2V model.
func TaskTypeOf(list []byte) string {
	var l struct {
		Data []modelCard `json:"data"`
	}
	if json.Unmarshal(list, &l) != nil || len(l.Data) == 0 || l.Data[0].TaskType == nil {
		return ""
	}
	return *l.Data[0].TaskType
}

// T2VInputReference is SGLang's _test_t2v_rejects_input_reference for a video case whose
// served model's task type is T2V: POST /v1/videos with input_reference "dummy" must answer
// 400 with a detail containing "input_reference is not supported".
func T2VInputReference(a Answer) results.Check {
	c := results.Check{Name: APIT2VInputReference, Status: results.Pass, Detail: "a T2V model refuses an input_reference with 400"}
	var body struct {
		Detail any `json:"detail"`
	}
	detail := ""
	if json.Unmarshal(a.Body, &body) == nil {
		if s, ok := body.Detail.(string); ok {
			detail = s
		}
	}
	switch {
	case a.Err != nil:
		c.Status, c.Detail = results.Fail, fmt.Sprintf("POST /v1/videos with an input_reference: %v", a.Err)
	case a.Status != 400:
		c.Status, c.Detail = results.Fail, fmt.Sprintf("Expected 400 for T2V input_reference, got %d: %s", a.Status, snippet(a.Body))
	case !strings.Contains(detail, "input_reference is not supported"):
		c.Status, c.Detail = results.Fail, fmt.Sprintf("Unexpected error detail for T2V input_reference: %q", detail)
	}
	if c.Status == results.Fail {
		c.Cause = "T2V model took an input_reference"
	}
	return c
}

// snippet is the start of an untrusted body, for a message.
func snippet(b []byte) string {
	const most = 200
	s := strings.ToValidUTF8(string(b), "�")
	if len(s) > most {
		s = s[:most] + "…"
	}
	return fmt.Sprintf("%q", s)
}

func strOrMissing(s *string) string {
	if s == nil {
		return "(missing)"
	}
	return fmt.Sprintf("%q", *s)
}

// ModelIDOf is the id of the first model card of a /v1/models body, "" when it has none.
func ModelIDOf(list []byte) string {
	var l struct {
		Data []modelCard `json:"data"`
	}
	if json.Unmarshal(list, &l) != nil || len(l.Data) == 0 || l.Data[0].ID == nil {
		return ""
	}
	return *l.Data[0].ID
}
