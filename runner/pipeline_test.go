package runner

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/internal/compare"
	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/suite"
)

// imageAPI answers every image request at once, each with a fresh id, and counts them.
type imageAPI struct{ sent atomic.Int32 }

func (a *imageAPI) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
	}
	n := a.sent.Add(1)
	body := fmt.Sprintf(`{"id": "req-%d", "data": [{"b64_json": "aGVsbG8="}]}`, n)
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
}

// gatedProbe is a validation that waits for the test: each output check takes one value from
// gate (or ends with ctx).
func gatedProbe(gate <-chan struct{}) prober {
	return func(ctx context.Context, path string) (media.Info, error) {
		select {
		case <-gate:
			return media.Info{Format: "png_pipe", Codec: "png", Width: 8, Height: 8, Frames: 1}, nil
		case <-ctx.Done():
			return media.Info{}, ctx.Err()
		}
	}
}

// pipelineRun is a run of one image case of n requests on api whose validations wait on
// gate, ahead validations allowed to wait (Options.ValidateAhead).
func pipelineRun(t *testing.T, api http.RoundTripper, n, concurrency, ahead int, gate <-chan struct{}) (*run, *server, *suite.Case) {
	t.Helper()
	off := false
	spec := &suite.Server{Name: "ref", RequestTimeout: time.Hour, PerfRecordTimeout: time.Hour, StopGrace: time.Second}
	c := &suite.Case{ID: "pipe", Server: "ref", Modality: suite.Image, Repeat: n, Concurrency: concurrency,
		Request: suite.Request{Prompt: "a fox", Width: 8, Height: 8, N: 1, OutputFormat: "png"},
		Checks:  suite.Toggles{PerfRecord: &off, Consistency: &off, Repeat: &off}}
	r, srv := requestRun(t, spec, c, api, time.Hour, io.Discard)
	r.opts.ValidateAhead = ahead
	cons := &consistencyConfig{caches: map[string]*compare.Cache{}, firsts: map[string]*firstOutput{}}
	r.val = newValidator(r.opts, cons, r.rec, r.logf)
	r.val.probe = gatedProbe(gate)
	r.finished, r.held = map[requestKey]results.RequestResult{}, map[requestKey]heldRequest{}
	return r, srv, c
}

// lines is what requests.jsonl holds: each line's request index and status.
func lines(t *testing.T, r *run) []string {
	t.Helper()
	rs, _, err := results.ReadRequests(t.Context(), filepath.Join(r.opts.Out, results.RequestsFile))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, rr := range rs {
		out = append(out, fmt.Sprintf("%d %s", rr.Index, rr.Status))
	}
	return out
}

// TestPipelineBackPressure: with one request in flight and two validations allowed to wait,
// a validation that does not finish lets exactly three requests be sent (one validating, two
// waiting); each validation that finishes lets one more be sent, none is dropped, and the
// lines of requests.jsonl come in index order.
func TestPipelineBackPressure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := &imageAPI{}
		gate := make(chan struct{})
		r, srv, c := pipelineRun(t, api, 6, 1, 2, gate)
		var out []results.RequestResult
		done := make(chan struct{})
		go func() {
			defer close(done)
			out = r.requests(t.Context(), c, srv, &results.CaseResult{ID: c.ID})
		}()
		synctest.Wait()
		if got := api.sent.Load(); got != 3 {
			t.Fatalf("sent %d requests while request 1 validates, want 3", got)
		}
		for k := 4; k <= 6; k++ {
			gate <- struct{}{}
			synctest.Wait()
			if got := api.sent.Load(); got != int32(k) {
				t.Fatalf("after %d validations, sent %d requests, want %d", k-3, got, k)
			}
		}
		for range 3 {
			gate <- struct{}{}
		}
		<-done
		want := []string{"1 pass", "2 pass", "3 pass", "4 pass", "5 pass", "6 pass"}
		if diff := cmp.Diff(want, lines(t, r)); diff != "" {
			t.Errorf("requests.jsonl (-want +got):\n%s", diff)
		}
		for _, rr := range out {
			if rr.Status != results.Pass {
				t.Errorf("request %d: %s %v", rr.Index, rr.Status, rr.Checks)
			}
		}
	})
}

// TestPipelineValidateFirst: with no validation allowed to wait (ValidateAhead < 0, SGLang's
// order), request 2 is sent only once request 1 is validated.
func TestPipelineValidateFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := &imageAPI{}
		gate := make(chan struct{})
		r, srv, c := pipelineRun(t, api, 2, 1, -1, gate)
		done := make(chan struct{})
		go func() {
			defer close(done)
			r.requests(t.Context(), c, srv, &results.CaseResult{ID: c.ID})
		}()
		synctest.Wait()
		if got := api.sent.Load(); got != 1 {
			t.Fatalf("sent %d requests before request 1 was validated, want 1", got)
		}
		gate <- struct{}{}
		synctest.Wait()
		if got := api.sent.Load(); got != 2 {
			t.Fatalf("sent %d requests after request 1 was validated, want 2", got)
		}
		gate <- struct{}{}
		<-done
	})
}

// TestPipelineCancelKeepsMeasured: a cancel while request 1 validates and requests 2 and 3
// wait for theirs records all three cancelled with what they measured (e2e, the server
// alive) and says their validation was cut short; the results.json a cancel writes at once
// holds them so before any line is written; the rest are cancelled unsent.
func TestPipelineCancelKeepsMeasured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := &imageAPI{}
		r, srv, c := pipelineRun(t, api, 5, 1, 2, make(chan struct{}))
		ctx, cancel := context.WithCancel(t.Context())
		var out []results.RequestResult
		done := make(chan struct{})
		go func() {
			defer close(done)
			out = r.requests(ctx, c, srv, &results.CaseResult{ID: c.ID})
		}()
		synctest.Wait()
		held := r.snapshot(results.Result{}, []*suite.Case{c}, "not finished")
		cancel()
		<-done
		status := func(rs []results.RequestResult) []string {
			var s []string
			for _, rr := range rs {
				var names []string
				for _, ck := range rr.Checks {
					names = append(names, ck.Name+":"+string(ck.Status))
				}
				s = append(s, fmt.Sprintf("%d %s %s", rr.Index, rr.Status, strings.Join(names, ",")))
			}
			return s
		}
		measuredCancelled := "server.alive:pass,perf.record:skip,output.valid:cancelled"
		want := []string{"1 cancelled " + measuredCancelled, "2 cancelled " + measuredCancelled, "3 cancelled " + measuredCancelled,
			"4 cancelled server.alive:cancelled", "5 cancelled server.alive:cancelled"}
		if diff := cmp.Diff(want, status(out)); diff != "" {
			t.Errorf("requests (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want[:3], status(held.Cases[0].Requests[:3])); diff != "" {
			t.Errorf("cancel snapshot before the cancel (-want +got):\n%s", diff)
		}
		for _, rr := range out[:3] {
			if rr.E2EMs < 0 || rr.RequestID == "" {
				t.Errorf("request %d: measurements lost: e2e %v, id %q", rr.Index, rr.E2EMs, rr.RequestID)
			}
		}
		if diff := cmp.Diff([]string{"1 cancelled", "2 cancelled", "3 cancelled", "4 cancelled", "5 cancelled"}, lines(t, r)); diff != "" {
			t.Errorf("requests.jsonl (-want +got):\n%s", diff)
		}
	})
}

// TestIdleBetween: the GPU is idle where no request is in flight, between the first send and
// the last answer; overlapping requests (concurrency) leave no gap, and a request not sent
// counts for nothing.
func TestIdleBetween(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	at := func(from, to int) span {
		return span{from: t0.Add(time.Duration(from) * time.Millisecond), to: t0.Add(time.Duration(to) * time.Millisecond)}
	}
	for _, tc := range []struct {
		name           string
		flights        []span
		total, longest time.Duration
	}{
		{"none", nil, 0, 0},
		{"one", []span{at(0, 100)}, 0, 0},
		{"in a row", []span{at(0, 100), at(103, 200), at(210, 300)}, 13 * time.Millisecond, 10 * time.Millisecond},
		{"overlapping", []span{at(0, 100), at(50, 150), at(120, 300), at(305, 400)}, 5 * time.Millisecond, 5 * time.Millisecond},
		{"out of order, one not sent", []span{at(210, 300), {}, at(0, 100)}, 110 * time.Millisecond, 110 * time.Millisecond},
		{"inside another", []span{at(0, 300), at(10, 20), at(310, 320)}, 10 * time.Millisecond, 10 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			total, longest := idleBetween(tc.flights)
			if total != tc.total || longest != tc.longest {
				t.Errorf("idleBetween = %s, %s; want %s, %s", total, longest, tc.total, tc.longest)
			}
		})
	}
}
