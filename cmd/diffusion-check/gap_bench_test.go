package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/runner"
	"github.com/diffusion-check/diffusion-check/suite"
)

// gapSuite measures how long the GPU waits for the harness on the reference server, one request at a time, each case
// with ground truth: a 512x512 image (5 requests), a 320x192 video+audio of 24 frames (4
// requests), and a 1280x720 video of 97 frames (4 requests). Its denoise steps take long
// enough that a request outlasts the validation of the one before it, as on a GPU (a 720p,
// 97-frame request there takes minutes).
const gapSuite = `
name: gap
ground_truth: gt
servers:
  ref:
    builtin: {step_ms: 60, load_ms: 10}
    reuse: true
cases:
  - id: image_512
    server: ref
    modality: image
    repeat: 5
    request: {prompt: a red fox in fresh snow, size: 512x512, seed: 42, steps: 8}
  - id: video_audio_320x192
    server: ref
    modality: video+audio
    repeat: 4
    request: {prompt: ocean waves at dusk, size: 320x192, seed: 7, steps: 12, fps: 8, num_frames: 24, extra: {generate_audio: true}}
  - id: video_720p
    server: ref
    modality: video
    repeat: 4
    request: {prompt: a city street at night, size: 1280x720, seed: 3, steps: 40, fps: 24, num_frames: 97}
`

// BenchmarkRequestGap runs gapSuite with each request validated before the next is sent (the
// old path, the named anchor: ValidateAhead < 0) and with validation beside the next request
// (the default), alternately in the same run, and prints per case the median gap between a
// request's answer (started_at + e2e_ms) and the next request's send, both paths and their
// ratio, and the GPU idle time the results record (idle_ms). It also prints the e2e of
// requests 2 … n, which on the pipelined path run beside the previous request's validation
// and on the other alone: the median of each, and the spread of each run's median, the
// run-to-run noise.
//
//	go test ./cmd/diffusion-check -run '^$' -bench RequestGap -benchtime 3x
func BenchmarkRequestGap(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "suite.yaml")
	if err := os.WriteFile(path, []byte(gapSuite), 0o644); err != nil {
		b.Fatal(err)
	}
	s, err := suite.Load(path)
	if err != nil {
		b.Fatal(err)
	}
	exe := filepath.Join(binDir, "diffusion-check")
	run := func(out string, mode runner.Mode, ahead int) *results.Result {
		res, err := runner.Run(b.Context(), runner.Options{Suite: s, Out: filepath.Join(dir, out), Force: true, Mode: mode,
			Executable: exe, Environ: os.Environ(), ValidateAhead: ahead})
		if err != nil {
			b.Fatal(err)
		}
		for _, cr := range res.Cases {
			if cr.Status != results.Pass {
				b.Fatalf("%s run: case %s is %s: %v; failing checks: %v", out, cr.ID, cr.Status, cr.Errors, failing(cr))
			}
		}
		return res
	}
	run("gt", runner.ModeGT, 0)
	paths := []struct {
		name  string
		ahead int
	}{{"validate-first", -1}, {"pipelined", 0}}
	gaps := map[string]map[string][]float64{}      // path → case → gaps (ms)
	idle := map[string]map[string][]float64{}      // path → case → idle_ms per run
	e2e := map[string]map[string][]float64{}       // path → case → e2e_ms of requests 2 … n
	runE2E := map[string]map[string][]float64{}    // path → case → their median in each run
	server := map[string]map[string][]float64{}    // path → case → server_total_ms of requests 2 … n
	runServer := map[string]map[string][]float64{} // path → case → their median in each run
	for _, p := range paths {
		gaps[p.name], idle[p.name] = map[string][]float64{}, map[string][]float64{}
		e2e[p.name], runE2E[p.name] = map[string][]float64{}, map[string][]float64{}
		server[p.name], runServer[p.name] = map[string][]float64{}, map[string][]float64{}
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		for _, p := range paths {
			res := run(fmt.Sprintf("%s-%d", p.name, i), runner.ModeCheck, p.ahead)
			for _, cr := range res.Cases {
				gaps[p.name][cr.ID] = append(gaps[p.name][cr.ID], requestGaps(cr.Requests)...)
				idle[p.name][cr.ID] = append(idle[p.name][cr.ID], cr.IdleMs)
				var these, totals []float64
				for _, rr := range cr.Requests[1:] {
					these, totals = append(these, rr.E2EMs), append(totals, rr.ServerTotalMs)
				}
				e2e[p.name][cr.ID] = append(e2e[p.name][cr.ID], these...)
				runE2E[p.name][cr.ID] = append(runE2E[p.name][cr.ID], median(these))
				server[p.name][cr.ID] = append(server[p.name][cr.ID], totals...)
				runServer[p.name][cr.ID] = append(runServer[p.name][cr.ID], median(totals))
			}
		}
	}
	b.StopTimer()
	for _, c := range s.Cases {
		old, now := median(gaps["validate-first"][c.ID]), median(gaps["pipelined"][c.ID])
		b.ReportMetric(now, "ms-gap-"+c.ID)
		b.Logf("%s: median gap %.1f ms pipelined vs %.1f ms validate-first (ratio %.3f; %d gaps each); idle_ms per run pipelined %v, validate-first %v",
			c.ID, now, old, now/old, len(gaps["pipelined"][c.ID]), idle["pipelined"][c.ID], idle["validate-first"][c.ID])
		beside, alone := median(e2e["pipelined"][c.ID]), median(e2e["validate-first"][c.ID])
		b.Logf("%s: e2e of requests 2-%d: median %.0f ms beside a validation vs %.0f ms alone (ratio %.3f; %d each); run medians beside %v, alone %v",
			c.ID, c.Repeat, beside, alone, beside/alone, len(e2e["pipelined"][c.ID]), rounded(runE2E["pipelined"][c.ID]), rounded(runE2E["validate-first"][c.ID]))
		beside, alone = median(server["pipelined"][c.ID]), median(server["validate-first"][c.ID])
		b.Logf("%s: the server's own total (server_total_ms, not rounded by the client's polling): median %.0f ms beside vs %.0f ms alone "+
			"(ratio %.3f); run medians beside %v, alone %v",
			c.ID, beside, alone, beside/alone, rounded(runServer["pipelined"][c.ID]), rounded(runServer["validate-first"][c.ID]))
	}
}

// failing names each check of cr that did not pass, with its request and detail.
func failing(cr results.CaseResult) []string {
	var out []string
	for _, rr := range cr.Requests {
		for _, c := range rr.Checks {
			if c.Status != results.Pass && c.Status != results.Skip {
				out = append(out, fmt.Sprintf("request %d %s %s: %s", rr.Index, c.Name, c.Status, c.Detail))
			}
		}
	}
	return out
}

// requestGaps is the time from each request's answer to the next request's send, in ms.
func requestGaps(rs []results.RequestResult) []float64 {
	var out []float64
	for k := 1; k < len(rs); k++ {
		answered := rs[k-1].StartedAt.Add(time.Duration(rs[k-1].E2EMs * float64(time.Millisecond)))
		out = append(out, float64(rs[k].StartedAt.Sub(answered).Microseconds())/1000)
	}
	return out
}

// rounded is xs to whole numbers, for the log.
func rounded(xs []float64) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(x + 0.5)
	}
	return out
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}
