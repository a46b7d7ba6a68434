package checks

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The checks of the server's API contract that SGLang's harness makes on every case by
// default (testcase_configs.py DiffusionTestCase: run_models_api_check and
// run_t2v_input_reference_check, both True; test_server_common.py _test_v1_models_endpoint,
// _test_t2v_rejects_input_reference, pandalee99/sglang @ cce0a1244, 2026-08-23).
const (
	APIModels            = "api.models"
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

// ModelsWant is what the served model must report: its id (SGLang's model_path; empty when
// the server's command does not say it) and its GPU count.
type ModelsWant struct {
	ID      string
	NumGPUs int
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
// and at least one model card of object "model", whose id is the model path, whose num_gpus
// is the server's, and which has task_type, dit_precision and vae_precision;
// /v1/models/{id} answers 200 with the same id, object and task_type; an unknown id answers
// 404 with error.code "model_not_found". The first assertion that fails is the check's
// detail, as SGLang stops there. SGLang also compares task_type with the task type of the
// model in its registry; diffusion-check does not know the registry and compares the two
// answers with each other (reading).
func ModelsAPI(a ModelsAnswers, want ModelsWant) Check {
	c := Check{Name: APIModels, Status: Pass}
	m, problem := listedModel(a.List, want)
	if problem == "" {
		problem = oneModelProblem(a.One, m)
	}
	if problem == "" {
		problem = unknownModelProblem(a.Unknown)
	}
	if problem != "" {
		c.Status, c.Detail, c.Cause = Fail, problem, "/v1/models contract"
		return c
	}
	c.Detail = fmt.Sprintf("model %s, task_type %s, num_gpus %d; an unknown id answers 404 model_not_found", *m.ID, *m.TaskType, *m.NumGPUs)
	return c
}

// listedModel is the first model card of GET /v1/models, or the first of ModelsAPI's
// assertions on the list that fails (then the card is not to be read).
func listedModel(list Answer, want ModelsWant) (modelCard, string) {
	fail := func(format string, args ...any) (modelCard, string) { return modelCard{}, fmt.Sprintf(format, args...) }
	if list.Err != nil {
		return fail("GET /v1/models: %v", list.Err)
	}
	if list.Status != 200 {
		return fail("/v1/models failed: %d %s", list.Status, snippet(list.Body))
	}
	var l struct {
		Object string      `json:"object"`
		Data   []modelCard `json:"data"`
	}
	if err := json.Unmarshal(list.Body, &l); err != nil {
		return fail("/v1/models: not JSON: %v", err)
	}
	if l.Object != "list" {
		return fail("Expected object='list', got %q", l.Object)
	}
	if len(l.Data) == 0 {
		return fail("Expected at least one model in response")
	}
	m := l.Data[0]
	switch {
	case m.ID == nil:
		return fail("Model missing 'id' field")
	case m.Object == nil || *m.Object != "model":
		return fail("Expected object='model', got %s", strOrMissing(m.Object))
	case want.ID != "" && *m.ID != want.ID:
		return fail("Model ID mismatch: expected %s, got %s", want.ID, *m.ID)
	case m.NumGPUs == nil:
		return fail("Model missing 'num_gpus' field")
	case m.TaskType == nil:
		return fail("Model missing 'task_type' field")
	case m.DitPrecision == nil:
		return fail("Model missing 'dit_precision' field")
	case m.VAEPrecision == nil:
		return fail("Model missing 'vae_precision' field")
	case *m.NumGPUs != want.NumGPUs:
		return fail("num_gpus mismatch: expected %d, got %d", want.NumGPUs, *m.NumGPUs)
	}
	return m, ""
}

// oneModelProblem is the first of ModelsAPI's assertions on GET /v1/models/{id} that fails,
// for the card m the list gave; "" when all hold.
func oneModelProblem(one Answer, m modelCard) string {
	if one.Err != nil {
		return fmt.Sprintf("GET /v1/models/%s: %v", *m.ID, one.Err)
	}
	if one.Status != 200 {
		return fmt.Sprintf("/v1/models/%s failed: %d %s", *m.ID, one.Status, snippet(one.Body))
	}
	var card modelCard
	if err := json.Unmarshal(one.Body, &card); err != nil {
		return fmt.Sprintf("/v1/models/%s: not JSON: %v", *m.ID, err)
	}
	switch {
	case card.ID == nil || *card.ID != *m.ID:
		return fmt.Sprintf("Single model ID mismatch: expected %s, got %s", *m.ID, strOrMissing(card.ID))
	case card.Object == nil || *card.Object != "model":
		return fmt.Sprintf("Single model object type mismatch: got %s", strOrMissing(card.Object))
	case card.NumGPUs == nil:
		return "Single model missing 'num_gpus' field"
	case card.TaskType == nil:
		return "Single model missing 'task_type' field"
	case *card.TaskType != *m.TaskType:
		return fmt.Sprintf("Single model task_type mismatch: expected %s, got %s", *m.TaskType, *card.TaskType)
	}
	return ""
}

// unknownModelProblem is the first of ModelsAPI's assertions on GET
// /v1/models/non_existent_model that fails; "" when all hold.
func unknownModelProblem(unknown Answer) string {
	if unknown.Err != nil {
		return fmt.Sprintf("GET /v1/models/non_existent_model: %v", unknown.Err)
	}
	if unknown.Status != 404 {
		return fmt.Sprintf("Expected 404, got %d (GET /v1/models/non_existent_model)", unknown.Status)
	}
	var e struct {
		Error *struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(unknown.Body, &e); err != nil || e.Error == nil {
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
func T2VInputReference(a Answer) Check {
	c := Check{Name: APIT2VInputReference, Status: Pass, Detail: "a T2V model refuses an input_reference with 400"}
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
		c.Status, c.Detail = Fail, fmt.Sprintf("POST /v1/videos with an input_reference: %v", a.Err)
	case a.Status != 400:
		c.Status, c.Detail = Fail, fmt.Sprintf("Expected 400 for T2V input_reference, got %d: %s", a.Status, snippet(a.Body))
	case !strings.Contains(detail, "input_reference is not supported"):
		c.Status, c.Detail = Fail, fmt.Sprintf("Unexpected error detail for T2V input_reference: %q", detail)
	}
	if c.Status == Fail {
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
