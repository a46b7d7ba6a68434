package report

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/golden"
	"github.com/diffusion-check/diffusion-check/judge"
	"github.com/diffusion-check/diffusion-check/results"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/checks"
)

var start = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func imageRequest(i, of int, e2e float64) results.RequestResult {
	return results.RequestResult{
		Case: "t2i", Index: i, Of: of, Status: results.Pass, StartedAt: start, E2EMs: e2e, ServerTotalMs: e2e - 6.2,
		Stages: results.Stages{
			{Name: "TextEncodingStage", Ms: 3.1},
			{Name: "DenoisingStage", Ms: 20.4},
			{Name: "DecodingStage", Ms: 41},
		},
		Output: &results.Output{Kind: "image", Format: "png", Bytes: 12595, Width: 256, Height: 256},
		Checks: []results.Check{
			checks.Passed(results.ServerAlive, ""),
			checks.Passed(results.OutputPresent, ""),
			checks.Passed(results.OutputValid, ""),
			checks.Passed(results.PerfRecord, ""),
		},
	}
}

func videoRequest(i, of int, e2e float64) results.RequestResult {
	return results.RequestResult{
		Case: "t2v", Index: i, Of: of, Status: results.Pass, StartedAt: start, E2EMs: e2e, ServerTotalMs: e2e - 31.5,
		// A real pipeline: more stages than the column shows.
		Stages: results.Stages{
			{Name: "InputValidationStage", Ms: 0.1},
			{Name: "TextEncodingStage", Ms: 12.5},
			{Name: "ConditioningStage", Ms: 0.4},
			{Name: "TimestepPreparationStage", Ms: 0.2},
			{Name: "LatentPreparationStage", Ms: 1.3},
			{Name: "DenoisingStage", Ms: 1520.7},
			{Name: "DecodingStage", Ms: 310.2},
		},
		Output: &results.Output{
			Kind: "video", Format: "mp4", Bytes: 46182, Width: 256, Height: 256, Frames: 16, FPS: 8, DurationS: 2,
			Audio: &results.Audio{Codec: "aac", SampleRate: 44100, Channels: 2, DurationS: 2},
		},
		Checks: []results.Check{
			checks.Passed(results.ServerAlive, ""),
			checks.Passed(results.OutputPresent, ""),
			checks.Passed(results.OutputValid, ""),
			checks.Passed(results.PerfRecord, ""),
			{Name: "perf.e2e", Status: results.Pass, Value: checks.Float(e2e), Limit: checks.Float(2500), Unit: "ms"},
		},
	}
}

func passingRun() *results.Result {
	return &results.Result{
		Suite: "quickstart", Lane: "base", Partition: results.Partition{Total: 1}, StartedAt: start,
		Cases: []results.CaseResult{
			{ID: "t2i", Server: "ref", Modality: "image", Load: &results.Load{DurationMs: 52},
				Requests: []results.RequestResult{imageRequest(1, 2, 70.3), imageRequest(2, 2, 68.9)}},
			{ID: "t2v", Server: "ref", Modality: "video+audio", Load: &results.Load{DurationMs: 1, Reused: true},
				Requests: []results.RequestResult{videoRequest(1, 2, 1874.2), videoRequest(2, 2, 1860)}},
		},
	}
}

func failingRun() *results.Result {
	r := passingRun()
	// The server crashes during request 2/2 of t2i; the known slow video is allowed.
	crashed := results.RequestResult{
		Case: "t2i", Index: 2, Of: 2, StartedAt: start, E2EMs: 12.4,
		Checks: []results.Check{
			checks.Failed(
				results.ServerAlive,
				"server exited during the request: signal: killed\nlast lines of the server log:\n  [refserver] request 2: denoising step 3/8\n"+
					"  [refserver] fault crash-at=2: exiting\n",
			),
			checks.Skipped(results.OutputPresent, "no response"),
			checks.Skipped(results.OutputValid, "no response"),
			checks.Skipped(results.PerfRecord, "no response"),
		},
	}
	r.Cases[0].Requests[1] = crashed
	slow := &r.Cases[1].Requests[1]
	slow.E2EMs, slow.ServerTotalMs = 2741.9, 2710.4
	slow.Checks[4] = results.Check{
		Name:   "perf.e2e",
		Status: results.Known,
		Value:  checks.Float(2710.4),
		Limit:  checks.Float(2500),
		Unit:   "ms",
		Detail: "known failure: slow decode on this GPU, until 2025-06-01",
	}
	return r
}

func startupFailure() *results.Result {
	return &results.Result{
		Suite: "quickstart", Lane: "base", Partition: results.Partition{Total: 1}, StartedAt: start,
		Cases: []results.CaseResult{
			{ID: "t2i", Server: "ref", Modality: "image",
				Checks: []results.Check{
					checks.Failed(results.ServerAlive, "server ref exited before it was ready: exit status 1\n[refserver] fault fail-startup: giving up"),
				},
			},
			{ID: "t2v", Server: "ref", Modality: "video", Status: results.Cancelled},
		},
	}
}

func TestTable(t *testing.T) {
	tests := []struct {
		name string
		r    *results.Result
		want results.Status
	}{
		{"pass", passingRun(), results.Pass},
		{"fail", failingRun(), results.Fail},
		{"startup", startupFailure(), results.Fail},
		{"empty", &results.Result{Suite: "quickstart", Errors: []string{"lane nightly: no cases"}}, results.Error},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			judge.Finalize(tt.r)
			if tt.r.Status != tt.want {
				t.Fatalf("fixture: run status %s, want %s", tt.r.Status, tt.want)
			}
			var b bytes.Buffer
			if err := Table(&b, tt.r); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "table-"+tt.name+".txt", b.Bytes())
		})
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestTableWriteError(t *testing.T) {
	r := passingRun()
	judge.Finalize(r)
	if err := Table(failWriter{}, r); err == nil {
		t.Error("Table to a failing writer: want an error")
	}
}

func TestOutput(t *testing.T) {
	tests := []struct {
		o    *results.Output
		want string
	}{
		{nil, "-"},
		{&results.Output{Kind: "image", Format: "png", Bytes: 12595, Width: 256, Height: 256}, "png 256x256 12.3 KiB"},
		{&results.Output{Kind: "image", Bytes: 0}, "image 0 B"},
		{&results.Output{Kind: "video", Format: "mp4", Bytes: 3 << 20, Width: 1280, Height: 720, Frames: 97, FPS: 23.976}, "mp4 1280x720 97f 23.98fps 3.0 MiB"},
		{
			&results.Output{Kind: "video", Format: "mp4", Bytes: 46182, Width: 256, Height: 256, Frames: 16, FPS: 8, Audio: &results.Audio{Codec: "aac"}},
			"mp4 256x256 16f 8fps +aac 45.1 KiB",
		},
		{&results.Output{Format: "mp4", Bytes: 5 << 40}, "mp4 5120.0 GiB"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, output(tt.o)); diff != "" {
			t.Errorf("output(%+v) (-want +got):\n%s", tt.o, diff)
		}
	}
}

func TestStages(t *testing.T) {
	tests := []struct {
		s    results.Stages
		want string
	}{
		{nil, "-"},
		{results.Stages{{Name: "DenoisingStage", Ms: 20.44}}, "Denoising 20.4"},
		{results.Stages{{Name: "Stage", Ms: 1}}, "Stage 1.0"},
		// Ties keep the earlier stages.
		{results.Stages{{Name: "A", Ms: 1}, {Name: "B", Ms: 1}, {Name: "C", Ms: 1}, {Name: "D", Ms: 1}}, "A 1.0 · B 1.0 · C 1.0 (+1)"},
		{results.Stages{{Name: "A", Ms: 1}, {Name: "B", Ms: 9}, {Name: "C", Ms: 2}, {Name: "D", Ms: 8}, {Name: "E", Ms: 7}}, "B 9.0 · D 8.0 · E 7.0 (+2)"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, stages(tt.s)); diff != "" {
			t.Errorf("stages(%v) (-want +got):\n%s", tt.s, diff)
		}
	}
}
