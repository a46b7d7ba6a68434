package runner

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/internal/perflog"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/suite"
)

// sglangJobID is a video job id as SGLang makes them (sampling_params.generate_request_id:
// str(uuid.uuid4())).
const sglangJobID = "3f2b8c1e-7d4a-4b6e-9a51-2c8e0f6d7b93"

// sglangAPI answers the OpenAI-style API as SGLang's handlers do, at the transport level so
// that it runs inside a synctest bubble: POST /v1/videos makes a queued job
// (video_api.create_video), every poll returns the job in status (the state
// _dispatch_job_async or delete_video left it in), or videoBody when set, as the answer to
// the POST; POST /v1/images/generations answers imageStatus with imageBody.
type sglangAPI struct {
	status      string
	jobError    any // the job's "error" object; nil: none
	videoBody   string
	imageStatus int
	imageBody   string
}

func (a *sglangAPI) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
	}
	answer := func(code int, body string) (*http.Response, error) {
		return &http.Response{StatusCode: code, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
	}
	job := func(status string, errObj any) (*http.Response, error) {
		b, _ := json.Marshal(map[string]any{"id": sglangJobID, "object": "video", "status": status, "progress": 0, "error": errObj})
		return answer(200, string(b))
	}
	switch {
	case req.Method == http.MethodPost && req.URL.Path == "/v1/videos" && a.videoBody != "":
		return answer(200, a.videoBody)
	case req.Method == http.MethodPost && req.URL.Path == "/v1/videos":
		return job("queued", nil)
	case req.Method == http.MethodGet && req.URL.Path == "/v1/videos/"+sglangJobID:
		return job(a.status, a.jobError)
	case req.Method == http.MethodPost && req.URL.Path == "/v1/images/generations":
		return answer(a.imageStatus, a.imageBody)
	}
	return answer(404, `{"detail": "Not Found"}`)
}

// requestRun is a run of one case on a server that is no process: its HTTP answers come from
// transport and its log is written by the test. For tests of run.request inside a synctest
// bubble; closed at the end of the test.
func requestRun(t *testing.T, spec *suite.Server, c *suite.Case, transport http.RoundTripper, heartbeat time.Duration, progress io.Writer) (*run, *server) {
	t.Helper()
	dir := t.TempDir()
	rec, err := results.NewWriter(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rec.Close() })
	logFile, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &server{spec: spec, baseURL: "http://server.invalid", log: newLogWatch(logFile, "ready"),
		perf: perflog.New(filepath.Join(dir, "perf", "performance.log")), exited: make(chan struct{})}
	t.Cleanup(srv.log.close)
	r := &run{
		opts: Options{
			Suite:      &suite.Suite{Servers: map[string]*suite.Server{spec.Name: spec}, Cases: []*suite.Case{c}},
			HTTPClient: &http.Client{Transport: transport},
			Heartbeat:  heartbeat,
			Out:        filepath.Join(dir, "out"),
		},
		rec:      rec,
		progress: progress,
	}
	return r, srv
}

// sendOne sends request 1/1 of a case to api inside a synctest bubble, with a request timeout
// of 100 s and a perf_record_timeout of an hour, and returns the result and how long it took
// on the bubble's clock (which moves only while every goroutine waits, so no real time is
// spent and the figure does not depend on the machine).
func sendOne(t *testing.T, api *sglangAPI, modality suite.Modality) (rr results.RequestResult, took time.Duration) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		spec := &suite.Server{Name: "sglang", RequestTimeout: 100 * time.Second, PerfRecordTimeout: time.Hour,
			PollInterval: 100 * time.Millisecond, StopGrace: time.Second}
		c := &suite.Case{ID: "fails", Server: "sglang", Modality: modality, Repeat: 1,
			Request: suite.Request{Prompt: "a fox", N: 1, OutputFormat: "png"}}
		r, srv := requestRun(t, spec, c, api, time.Hour, io.Discard)
		began := time.Now()
		rr = r.measure(t.Context(), c, srv, slot{index: 1, of: 1}).unvalidated()
		took = time.Since(began)
	})
	return rr, took
}

// failures lists the failed checks of a result as "name: detail".
func failures(cs []results.Check) []string {
	var out []string
	for _, c := range cs {
		if c.Status == results.Fail || c.Status == results.Error {
			out = append(out, fmt.Sprintf("%s: %s", c.Name, c.Detail))
		}
	}
	return out
}

// TestServerReportedFailureIsNotJoinedToAPerfRecord: a request the server reported
// failed (a video job in status failed, an HTTP error answer) gets exactly one failure, with
// the server's message, and no wait for a performance.log record: SGLang writes none for a
// failed forward. The perf_record_timeout is an hour, so a wait would show in the time taken
// on the bubble's clock; perf.record is a skip saying why.
func TestServerReportedFailureIsNotJoinedToAPerfRecord(t *testing.T) {
	for _, tc := range []struct {
		name     string
		api      *sglangAPI
		modality suite.Modality
		want     string
	}{
		{"video job failed", &sglangAPI{status: "failed", jobError: map[string]any{"message": "CUDA out of memory"}}, suite.Video,
			`output.present: video job ` + sglangJobID + ` ended in status "failed": CUDA out of memory`},
		{"HTTP 400 from an HTTPException", &sglangAPI{imageStatus: 400, imageBody: `{"detail": "response_format=url is not supported"}`}, suite.Image,
			"output.present: POST /v1/images/generations: HTTP 400: response_format=url is not supported"},
		{"HTTP 422 from request validation", &sglangAPI{imageStatus: 422,
			imageBody: `{"detail": [{"type": "int_from_float", "loc": ["body", "n"], "msg": "Input should be a valid integer, ` +
				`got a number with a fractional part", "input": 1.5}]}`}, suite.Image,
			"output.present: POST /v1/images/generations: HTTP 422: body.n: Input should be a valid integer, got a number with a fractional part"},
		{"HTTP 200 carrying an error object instead of a job", &sglangAPI{videoBody: `{"error": {"message": "queue full"}}`}, suite.Video,
			"output.present: POST /v1/videos: HTTP 200: queue full"},
		{"HTTP 200 carrying an error object", &sglangAPI{imageStatus: 200,
			imageBody: `{"id": "x", "data": [], "error": {"message": "safety checker refused the prompt"}}`}, suite.Image,
			"output.present: POST /v1/images/generations: HTTP 200: safety checker refused the prompt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rr, took := sendOne(t, tc.api, tc.modality)
			if diff := cmp.Diff([]string{tc.want}, failures(rr.Checks)); diff != "" {
				t.Errorf("failures (-want +got):\n%s", diff)
			}
			if took >= time.Minute {
				t.Errorf("the request took %s on the bubble's clock: it waited for a perf record", took)
			}
			var perf *results.Check
			for i := range rr.Checks {
				if rr.Checks[i].Name == results.PerfRecord {
					perf = &rr.Checks[i]
				}
			}
			if perf == nil || perf.Status != results.Skip || !strings.Contains(perf.Detail, "SGLang writes no performance.log record for a failed request") {
				t.Errorf("perf.record check %+v, want a skip saying why", perf)
			}
		})
	}
}

// TestVideoJobEndsOnAnyStatusButQueuedOrInProgress: a job deleted (video_api.delete_video),
// or in a status SGLang does not define, ends the request at once with a failure naming the
// status (and the job's error message when it has one); it is not polled until the request
// timeout.
func TestVideoJobEndsOnAnyStatusButQueuedOrInProgress(t *testing.T) {
	for _, tc := range []struct {
		status   string
		jobError any
		want     string
	}{
		{"deleted", nil, `ended in status "deleted": the job was deleted before it completed`},
		{"error", map[string]any{"message": "worker lost"}, `ended in status "error": worker lost`},
		{"cancelled", nil, `ended in status "cancelled": a status SGLang's video API does not define (known: queued, in_progress, completed, failed, deleted)`},
		{"", nil, `ended in status "": a status SGLang's video API does not define`},
		{"failed", map[string]any{"message": 42}, `ended in status "failed": "{\"message\":42}"`},
	} {
		t.Run(tc.status, func(t *testing.T) {
			rr, took := sendOne(t, &sglangAPI{status: tc.status, jobError: tc.jobError}, suite.Video)
			got := failures(rr.Checks)
			if len(got) != 1 || !strings.Contains(got[0], tc.want) {
				t.Errorf("failures %q, want one containing %q", got, tc.want)
			}
			if took >= time.Minute {
				t.Errorf("the request took %s on the bubble's clock, polling a finished job", took)
			}
		})
	}
}

// TestErrorMessage reads the error bodies SGLang's FastAPI app sends.
func TestErrorMessage(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"detail": "Video not found"}`, "Video not found"},
		{`{"detail": [{"loc": ["body", "seconds"], "msg": "Input should be a valid integer"}, {"loc": ["body", "prompt"], "msg": "Field required"}]}`,
			"body.seconds: Input should be a valid integer; body.prompt: Field required"},
		{`{"error": {"message": "boom", "type": "server_error"}}`, "boom"},
		{`{"error": "plain"}`, "plain"},
		{`Internal Server Error`, `"Internal Server Error"`},
		{`{"detail": {"code": 7}}`, `"{\"code\":7}"`},
		{`{"detail": "` + strings.Repeat("é", 3000) + `"}`, strings.Repeat("é", maxErrorText/2) + "…"},
	} {
		if got := errorMessage([]byte(tc.body)); got != tc.want {
			t.Errorf("errorMessage(%s) = %q, want %q", tc.body, got, tc.want)
		}
	}
}
