package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/suite"
)

// hangingServer answers the video API with a job whose progress grows by 10% a poll and that
// never completes; an image request never gets an answer. Either way the request runs into
// its timeout, which is what a hung diffusion server does.
type hangingServer struct {
	mu    sync.Mutex
	polls int
}

func (h *hangingServer) RoundTrip(req *http.Request) (*http.Response, error) {
	answer := func(v any) (*http.Response, error) {
		b, _ := json.Marshal(v)
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(b)), Request: req}, nil
	}
	switch {
	case req.Method == http.MethodPost && req.URL.Path == "/v1/videos":
		return answer(map[string]any{"id": "video_1", "status": "queued", "progress": 0})
	case req.Method == http.MethodGet && req.URL.Path == "/v1/videos/video_1":
		h.mu.Lock()
		h.polls++
		p := min(10*h.polls, 90)
		h.mu.Unlock()
		return answer(map[string]any{"id": "video_1", "status": "in_progress", "progress": p})
	}
	<-req.Context().Done()
	return nil, req.Context().Err()
}

// hungRequest sends request 2/3 of a case to a server that never finishes it, with a request
// timeout of 100 s and a heartbeat every 30 s, in a bubble whose clock only moves when every
// goroutine waits: no test time is spent. It returns the result and the progress lines.
func hungRequest(t *testing.T, modality suite.Modality, poll time.Duration) (results.RequestResult, []string) {
	t.Helper()
	var rr results.RequestResult
	var progress bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		spec := &suite.Server{Name: "ref", RequestTimeout: 100 * time.Second, PollInterval: poll, StopGrace: time.Second}
		c := &suite.Case{ID: "hangs", Server: "ref", Modality: modality, Repeat: 3, Request: suite.Request{Prompt: "a fox", N: 1, OutputFormat: "png"}}
		r, srv := requestRun(t, spec, c, &hangingServer{}, 30*time.Second, &progress)
		fmt.Fprintln(srv.log, "INFO: Application startup complete.")
		fmt.Fprintln(srv.log, "INFO: denoising step 3/50")
		rr = r.measure(t.Context(), c, srv, slot{index: 2, of: c.Repeat}).unvalidated()
	})
	return rr, strings.Split(strings.TrimSpace(progress.String()), "\n")
}

// TestHeartbeatWhileRequestHangs: a request that hangs until its timeout prints a heartbeat
// every interval (elapsed / limit, the video job's latest progress when there is a job, the
// server's last log line) and none after the outcome. The video job is polled every 7 s and
// gains 10% a poll.
func TestHeartbeatWhileRequestHangs(t *testing.T) {
	for _, tc := range []struct {
		modality suite.Modality
		job      [3]string
	}{
		{suite.Image, [3]string{"", "", ""}},
		{suite.Video, [3]string{"video job video_1 in_progress 40%; ", "video job video_1 in_progress 80%; ", "video job video_1 in_progress 90%; "}},
	} {
		t.Run(string(tc.modality), func(t *testing.T) {
			rr, lines := hungRequest(t, tc.modality, 7*time.Second)
			want := []string{
				"hangs request 2/3: waiting: 30s / 1m40s; " + tc.job[0] + "server log: INFO: denoising step 3/50",
				"hangs request 2/3: waiting: 1m0s / 1m40s; " + tc.job[1] + "server log: INFO: denoising step 3/50",
				"hangs request 2/3: waiting: 1m30s / 1m40s; " + tc.job[2] + "server log: INFO: denoising step 3/50",
			}
			if diff := cmp.Diff(want, lines); diff != "" {
				t.Errorf("progress lines (-want +got):\n%s", diff)
			}
			if got := firstProblem(rr.Checks); !strings.Contains(got, "no complete output within the request timeout of 1m40s") {
				t.Errorf("hung request's problem %q, want the request timeout", got)
			}
		})
	}
}

// TestHeartbeatStopsQuietly: a wait shorter than the interval prints nothing, and an empty
// log says so rather than quoting nothing.
func TestHeartbeatStopsQuietly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var progress bytes.Buffer
		r := &run{opts: Options{Heartbeat: time.Minute}, progress: &progress}
		stop := r.beat("a: starting server ref", 20*time.Minute, func() string { return "server log: (nothing yet)" })
		time.Sleep(59 * time.Second)
		stop()
		if progress.Len() != 0 {
			t.Errorf("a wait shorter than the heartbeat printed %q", progress.String())
		}
		stop = r.beat("a: starting server ref", 20*time.Minute, func() string { return "server log: (nothing yet)" })
		time.Sleep(61 * time.Second)
		stop()
		if got, want := progress.String(), "a: starting server ref: 1m0s / 20m0s; server log: (nothing yet)\n"; got != want {
			t.Errorf("heartbeat %q, want %q", got, want)
		}
	})
}
