package checks

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/results"
)

// TestModelsAPIFollowsSGLang: ModelsAPI makes SGLang's assertions of
// DiffusionServerBase._test_v1_models_endpoint (sgl-project/sglang,
// python/sglang/multimodal_gen/test/server/test_server_common.py, read 2026-12-02) in its
// order, and the first that fails is the detail, in SGLang's words.
func TestModelsAPIFollowsSGLang(t *testing.T) {
	const card = `{"id":"Qwen/Qwen-Image","object":"model","num_gpus":1,"task_type":"T2I","dit_precision":"bf16","vae_precision":"fp32"}`
	list := Answer{Status: 200, Body: []byte(`{"object":"list","data":[` + card + `]}`)}
	one := Answer{Status: 200, Body: []byte(card)}
	unknown := Answer{Status: 404, Body: []byte(`{"error":{"code":"model_not_found","message":"no such model"}}`)}
	want := ModelsWant{NumGPUs: 1}
	listOf := func(c string) Answer {
		return Answer{Status: 200, Body: []byte(`{"object":"list","data":[` + c + `]}`)}
	}
	for _, tc := range []struct {
		name               string
		list, one, unknown Answer
		want               ModelsWant
		status             results.Status
		detail             string
	}{
		{"all hold", list, one, unknown, want, results.Pass,
			"model Qwen/Qwen-Image, task_type T2I, num_gpus 1; an unknown id answers 404 model_not_found"},
		{"list fails", Answer{Status: 503, Body: []byte("loading")}, one, unknown, want, results.Fail, `/v1/models failed: 503 "loading"`},
		{"not a list", Answer{Status: 200, Body: []byte(`{"object":"model"}`)}, one, unknown, want, results.Fail, `Expected object='list', got "model"`},
		{"no model", listOf(""), one, unknown, want, results.Fail, "Expected at least one model in response"},
		{"no id", listOf(`{"object":"model"}`), one, unknown, want, results.Fail, "Model missing 'id' field"},
		{"no vae_precision", listOf(`{"id":"Qwen/Qwen-Image","object":"model","num_gpus":1,"task_type":"T2I","dit_precision":"bf16"}`), one, unknown, want,
			results.Fail, "Model missing 'vae_precision' field"},
		{"GPU count", list, one, unknown, ModelsWant{NumGPUs: 2}, results.Fail, "num_gpus mismatch: expected 2, got 1"},
		{"single model of another id", list, Answer{Status: 200, Body: []byte(`{"id":"x","object":"model"}`)}, unknown, want, results.Fail,
			`Single model ID mismatch: expected Qwen/Qwen-Image, got "x"`},
		{"single model of another task", list, Answer{Status: 200, Body: []byte(`{"id":"Qwen/Qwen-Image","object":"model","num_gpus":1,"task_type":"T2V"}`)},
			unknown, want, results.Fail, "Single model task_type mismatch: expected T2I, got T2V"},
		{"unknown id found", list, one, Answer{Status: 200, Body: []byte(card)}, want, results.Fail,
			"Expected 404, got 200 (GET /v1/models/non_existent_model)"},
		{"404 without error", list, one, Answer{Status: 404, Body: []byte(`{"detail":"Not Found"}`)}, want, results.Fail, "404 response missing 'error' field"},
		{"404 of another code", list, one, Answer{Status: 404, Body: []byte(`{"error":{"code":"not_found"}}`)}, want, results.Fail,
			`Incorrect error code: "not_found"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ModelsAPI(ModelsAnswers{List: tc.list, One: tc.one, Unknown: tc.unknown}, tc.want)
			got := struct {
				Status results.Status
				Detail string
			}{c.Status, c.Detail}
			if diff := cmp.Diff(struct {
				Status results.Status
				Detail string
			}{tc.status, tc.detail}, got); diff != "" {
				t.Errorf("ModelsAPI (-want +got):\n%s", diff)
			}
			if c.Name != APIModels || (c.Status == results.Fail) != (c.Cause == "/v1/models contract") {
				t.Errorf("check %q, cause %q: want %q, and the contract as cause of a failure alone", c.Name, c.Cause, APIModels)
			}
		})
	}
}

// TestModelID: the listed card names the expected model, whatever says what to expect; a
// wrong id fails naming both and where the expectation came from; nothing expected, or no
// card id to read (api.models fails then), is a skip.
func TestModelID(t *testing.T) {
	list := Answer{Status: 200, Body: []byte(`{"object":"list","data":[{"id":"Qwen-Image","object":"model"}]}`)}
	for _, tc := range []struct {
		name   string
		list   Answer
		want   ExpectedModel
		status results.Status
		detail string
	}{
		{"the model id", list, ExpectedModel{ID: "Qwen-Image", From: "the server's --model-id"}, results.Pass,
			`GET /v1/models names "Qwen-Image" (the server's --model-id)`},
		{"the model path instead", list, ExpectedModel{ID: "Qwen-Image", From: "the case's expected_model_id"}, results.Pass,
			`GET /v1/models names "Qwen-Image" (the case's expected_model_id)`},
		{"another id", list, ExpectedModel{ID: "Qwen/Qwen-Image", From: "the server's --model-path"}, results.Fail,
			`Model ID mismatch: GET /v1/models names "Qwen-Image", expected "Qwen/Qwen-Image" (the server's --model-path)`},
		{"nothing expected", list, ExpectedModel{}, results.Skip, "nothing to compare with"},
		{"no list", Answer{Status: 503, Body: []byte("loading")}, ExpectedModel{ID: "m", From: "x"}, results.Skip,
			"GET /v1/models gave no model id (see api.models)"},
		{"no card id", Answer{Status: 200, Body: []byte(`{"object":"list","data":[{"object":"model"}]}`)}, ExpectedModel{ID: "m", From: "x"},
			results.Skip, "GET /v1/models gave no model id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ModelID(tc.list, tc.want)
			if c.Name != APIModelID || c.Status != tc.status || !strings.Contains(c.Detail, tc.detail) {
				t.Errorf("ModelID = %+v, want %s saying %q", c, tc.status, tc.detail)
			}
		})
	}
}
