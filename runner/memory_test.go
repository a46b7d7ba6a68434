package runner

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/internal/memory"
	"github.com/diffusion-check/diffusion-check/judge"
	"github.com/diffusion-check/diffusion-check/results"
)

type fakeWindow struct{ p memory.Peaks }

func (w fakeWindow) End() memory.Peaks { return w.p }

type fakeSession struct {
	p       memory.Peaks
	stopped int
}

func (s *fakeSession) Window() memory.Window { return fakeWindow{s.p} }
func (s *fakeSession) Stop()                 { s.stopped++ }

// TestRequestMemory: the sampler's peaks land beside the server's own, and a source left out
// becomes a skipped memory.sampler check that does not change the request's status.
func TestRequestMemory(t *testing.T) {
	sess := &fakeSession{p: memory.Peaks{MiB: map[string]float64{"nvml_process": 4294, "host_anon": 385}, Notes: []string{"x", "x"}}}
	srv := &server{mem: sess}
	m := srv.openRequestMemory()
	m.end()
	rr := results.RequestResult{
		PeakVRAMMiB: map[string]float64{"server_reserved": 3618},
		Checks:      []results.Check{{Name: results.ServerAlive, Status: results.Pass}},
	}
	rr.Checks = append(rr.Checks, m.record(&rr)...)
	if diff := cmp.Diff(map[string]float64{"server_reserved": 3618, "nvml_process": 4294, "host_anon": 385}, rr.PeakVRAMMiB); diff != "" {
		t.Errorf("peaks (-want +got):\n%s", diff)
	}
	want := results.Check{Name: memorySamplerCheck, Status: results.Skip, Source: "host_anon,nvml_process", Detail: "request memory: x"}
	if diff := cmp.Diff([]results.Check{{Name: results.ServerAlive, Status: results.Pass}, want}, rr.Checks); diff != "" {
		t.Errorf("checks (-want +got):\n%s", diff)
	}
	if st := judge.RequestStatus(rr.Checks); st != results.Pass {
		t.Errorf("status %s, want pass", st)
	}

	// No sampler: nothing is added; a sampler that failed to start leaves a note only.
	var none *requestMemory
	none.end()
	if cs := none.record(&rr); cs != nil {
		t.Errorf("no sampler: %v", cs)
	}
	failed := (&server{memNote: "memory sampling did not start: boom"}).openRequestMemory()
	failed.end()
	rr2 := results.RequestResult{}
	rr2.Checks = failed.record(&rr2)
	if rr2.PeakVRAMMiB != nil || len(rr2.Checks) != 1 || rr2.Checks[0].Detail != "request memory: memory sampling did not start: boom" {
		t.Errorf("failed sampler: %+v", rr2)
	}
}

func TestLoadMemory(t *testing.T) {
	srv := &server{loadWin: fakeWindow{memory.Peaks{MiB: map[string]float64{"nvml_process": 2658}}}}
	cr := results.CaseResult{Load: &results.Load{DurationMs: 1}}
	endLoadMemory(srv, &cr)
	// The server's own load peak arrives later with the first perf record; the first value
	// per source wins.
	cr.Load.PeakVRAMMiB = mergePeaks(cr.Load.PeakVRAMMiB, map[string]float64{"server_reserved": 2048, "nvml_process": 1})
	if diff := cmp.Diff(map[string]float64{"nvml_process": 2658, "server_reserved": 2048}, cr.Load.PeakVRAMMiB); diff != "" {
		t.Errorf("load peaks (-want +got):\n%s", diff)
	}
	if len(cr.Checks) != 0 || srv.loadWin != nil {
		t.Errorf("checks %v, window left open %v", cr.Checks, srv.loadWin != nil)
	}
}
