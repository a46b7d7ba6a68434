package runner

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/suite"
)

// contractTimeout bounds each request of the API contract checks (SGLang's
// _CONTROL_API_TIMEOUT_SECS is of the same order), and contractBodyMax the body read.
const (
	contractTimeout = 30 * time.Second
	contractBodyMax = 1 << 20
)

// contractChecks are the API checks SGLang's harness makes on every case after its
// generation, unless the case turns them off (checks.models_api, checks.t2v_input_reference):
// the /v1/models contract, and for a video case served by a T2V model, the refusal of an
// input_reference. The answers are measured here, judged in package checks.
func (r *run) contractChecks(ctx context.Context, c *suite.Case, spec *suite.Server, srv *server) []results.Check {
	models := suite.Enabled(c.Checks.ModelsAPI)
	t2v := suite.Enabled(c.Checks.T2VInputReference) && c.Modality != suite.Image
	if !models && !t2v {
		return nil
	}
	var out []results.Check
	list := r.answer(ctx, srv, http.MethodGet, "/v1/models", nil)
	if models {
		a := checks.ModelsAnswers{List: list}
		id := checks.ModelIDOf(list.Body)
		if id != "" {
			a.One = r.answer(ctx, srv, http.MethodGet, "/v1/models/"+pathEscapeModel(id), nil)
		} else {
			a.One = checks.Answer{Err: fmt.Errorf("no model id in /v1/models")}
		}
		a.Unknown = r.answer(ctx, srv, http.MethodGet, "/v1/models/non_existent_model", nil)
		out = append(out, checks.ModelsAPI(a, checks.ModelsWant{NumGPUs: numGPUs(spec)}), checks.ModelID(list, expectedModel(c, spec)))
	}
	if t2v && list.Err == nil && list.Status == http.StatusOK && checks.TaskTypeOf(list.Body) == "T2V" {
		// SGLang's payload: the prompt, the dummy reference, and the size when the case has one
		// (_test_t2v_rejects_input_reference).
		body := fmt.Sprintf(`{"prompt": %s, "input_reference": "dummy"}`, strconv.Quote(cmpPrompt(c)))
		if c.Request.Size != "" {
			body = fmt.Sprintf(`{"prompt": %s, "input_reference": "dummy", "size": %s}`, strconv.Quote(cmpPrompt(c)), strconv.Quote(c.Request.Size))
		}
		out = append(out, checks.T2VInputReference(r.answer(ctx, srv, http.MethodPost, "/v1/videos", strings.NewReader(body))))
	}
	return out
}

// answer sends one contract request and reads at most contractBodyMax of the answer.
func (r *run) answer(ctx context.Context, srv *server, method, p string, body io.Reader) checks.Answer {
	ctx, cancel := context.WithTimeout(ctx, contractTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, srv.baseURL+p, body)
	if err != nil {
		return checks.Answer{Err: err}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.opts.HTTPClient.Do(req)
	if err != nil {
		return checks.Answer{Err: err}
	}
	defer func() { _ = resp.Body.Close() }() // the body was read; a close error changes nothing
	b, err := io.ReadAll(io.LimitReader(resp.Body, contractBodyMax))
	if err != nil {
		return checks.Answer{Status: resp.StatusCode, Err: fmt.Errorf("read the answer: %w", err)}
	}
	return checks.Answer{Status: resp.StatusCode, Body: b}
}

// pathEscapeModel escapes each segment of a model path ("black-forest-labs/FLUX.1-dev"),
// which SGLang's route takes whole ({model:path}).
func pathEscapeModel(id string) string {
	parts := strings.Split(id, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return path.Join(parts...)
}

// expectedModel is the model id /v1/models must name: the case's expected_model_id, else the
// server's served model name as SGLang derives it (server_args.py: --served-model-name, else
// --model-id, else --model-path; a builtin server's model_id, else its model). Its ID is ""
// when neither the case nor the command says.
func expectedModel(c *suite.Case, spec *suite.Server) checks.ExpectedModel {
	if c.ExpectedModelID != "" {
		return checks.ExpectedModel{ID: c.ExpectedModelID, From: "the case's expected_model_id"}
	}
	if b := spec.Builtin; b != nil {
		if b.ModelID != "" {
			return checks.ExpectedModel{ID: b.ModelID, From: "the builtin server's model_id"}
		}
		return checks.ExpectedModel{ID: b.Model, From: "the builtin server's model"}
	}
	for _, flag := range []string{"--served-model-name", "--model-id", "--model-path"} {
		if v := suite.FlagValue(spec.Command, flag); v != "" {
			return checks.ExpectedModel{ID: v, From: "the server's " + flag}
		}
	}
	return checks.ExpectedModel{}
}

// numGPUs is the server's --num-gpus (SGLang's default 1).
func numGPUs(spec *suite.Server) int {
	if n, err := strconv.Atoi(suite.FlagValue(spec.Command, "--num-gpus")); err == nil && n > 0 {
		return n
	}
	return 1
}

func cmpPrompt(c *suite.Case) string {
	if c.Request.Prompt != "" {
		return c.Request.Prompt
	}
	return "test"
}
