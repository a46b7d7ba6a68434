package report

import (
	"fmt"
	"strings"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/judge"
	"github.com/diffusion-check/diffusion-check/results"
)

// The fixtures build results as a real run of an SGLang-like server would write them: perf,
// memory, consistency and audio checks on every request.

func val(name string, st results.Status, v, limit float64, unit string) results.Check {
	return results.Check{Name: name, Status: st, Value: checks.Float(v), Limit: checks.Float(limit), Unit: unit}
}

// perfCheck is a perf check whose limit was derived from a baseline with 10 % tolerance.
func perfCheck(name string, v, baseline float64) results.Check {
	limit := baseline * 1.1
	st := results.Pass
	if v > limit {
		st = results.Fail
	}
	ck := val(name, st, v, limit, "ms")
	ck.Baseline, ck.Tolerance = checks.Float(baseline), checks.Float(0.1)
	return ck
}

type reqSpec struct {
	e2e, denoise, vram, ssim, psnr float64
	leak                           float64 // MiB grown since the previous request
	audioFail                      bool
	crash                          bool
}

func request(caseID string, i, of int, video bool, s reqSpec) results.RequestResult {
	rr := results.RequestResult{
		// The client waits a little longer than the server's own total.
		Case: caseID, Index: i, Of: of, StartedAt: start, E2EMs: s.e2e + 412, ServerTotalMs: s.e2e, RequestID: fmt.Sprintf("%s-%d", caseID, i),
		Stages: results.Stages{{Name: "TextEncodingStage", Ms: 812.5}, {Name: "DenoisingStage", Ms: s.denoise}, {Name: "DecodingStage", Ms: 2310.2}},
		// NVML also counts the CUDA context; the server reports what its allocator holds.
		PeakVRAMMiB: map[string]float64{"nvml_process": s.vram + 1800, "server_reserved": s.vram, "server_allocated": s.vram - 2000},
		Output:      &results.Output{Kind: "image", Format: "png", Bytes: 1 << 20, Width: 1024, Height: 1024},
	}
	if s.crash {
		crash := checks.Failed(
			results.ServerAlive,
			"server process exited (exit status 139) while the request was in flight (EOF)\nlast lines of the server log:\n  Fatal Python error: Segmentation fault",
		)
		crash.Cause = "server crashed, exit 139"
		// As the runner records it: the memory sampled during the request, which the server
		// never reported (it died), fails as SGLang's "peak VRAM metric missing".
		noPeak := checks.Failed("memory.runtime_peak",
			"memory.runtime_peak: peak VRAM metric missing (the server reported no memory_snapshots), baseline runtime_peak_vram_mb 34000 MiB")
		noPeak.Source, noPeak.Limit, noPeak.Unit, noPeak.Baseline = "server_reserved", checks.Float(36000), "MiB", checks.Float(34000)
		rr.Checks = []results.Check{crash, checks.Skipped(results.OutputPresent, "no response"), noPeak}
		rr.E2EMs, rr.ServerTotalMs, rr.PeakVRAMMiB = 4210, 0, nil
		return rr
	}
	mem := func(src string, v, limit float64) results.Check {
		ck := results.Check{Name: "memory.runtime_peak", Status: results.Pass, Value: checks.Float(v), Limit: checks.Float(limit), Unit: "MiB", Source: src}
		if v > limit {
			ck.Status = results.Fail
		}
		return ck
	}
	rr.Checks = []results.Check{
		checks.Passed(results.ServerAlive, ""),
		checks.Passed(results.OutputPresent, ""),
		checks.Passed(results.OutputValid, ""),
		perfCheck("perf.e2e", s.e2e, 60000),
		perfCheck("perf.stage.DenoisingStage", s.denoise, 52000),
		mem("server_reserved", s.vram, 36000),
		val("consistency.ssim", results.Pass, s.ssim, 0.92, ""),
		val("consistency.psnr", results.Pass, s.psnr, 30, "dB"),
		mem("server_allocated", s.vram-2000, 34000),
		{Name: "memory.runtime_peak", Status: results.Skip, Value: checks.Float(s.vram + 1800), Unit: "MiB", Source: "nvml_process"},
	}
	if s.leak > 0 { // grown since the previous request, like checks.Growth says
		for _, j := range []int{5, 8} {
			ck := &rr.Checks[j]
			ck.Status = results.Fail
			ck.Cause = fmt.Sprintf("memory grows +%.0f MiB per request", s.leak)
			ck.Detail = fmt.Sprintf("%s grew from %.0f to %.0f MiB since request %d (+%.0f MiB): memory grows across requests", ck.Source,
				*ck.Value-s.leak, *ck.Value, i-1, s.leak)
		}
	}
	if s.ssim < 0.92 {
		rr.Checks[6].Status = results.Fail
		rr.Checks[6].Detail = fmt.Sprintf("min SSIM %.4f at frame 12 of 97 (limit ≥ 0.92; mean 0.9412; 40 of 97 compared frames out of limit)", s.ssim)
		rr.Checks[6].Cause = "drifts from frame 12 (40 of 97 frames)"
	}
	if video {
		rr.Output = &results.Output{Kind: "video", Format: "mp4", Bytes: 3 << 20, Width: 1280, Height: 720, Frames: 97, FPS: 24,
			Audio: &results.Audio{Codec: "aac", SampleRate: 44100, Channels: 2, DurationS: 4}}
		sp := val("audio.spectral_similarity", results.Pass, 0.991, 0.95, "")
		rms := val("audio.rms_db_diff", results.Pass, 0.4, 3, "dB")
		if s.audioFail {
			rms.Status, rms.Value = results.Fail, checks.Float(7.9)
			rms.Detail, rms.Cause = "RMS level difference 7.90 (limit ≤ 3)", "differs from the ground truth"
		}
		rr.Checks = append(rr.Checks, sp, rms)
	}
	return rr
}

func caseOf(id string, video bool, specs ...reqSpec) results.CaseResult {
	c := results.CaseResult{
		ID: id, Server: "sglang", Lane: "base", Modality: "image", WallMs: 180000,
		Load: &results.Load{DurationMs: 95000, PeakVRAMMiB: map[string]float64{"nvml_process": 31200}},
		Checks: []results.Check{
			{Name: "memory.load_peak", Status: results.Pass, Value: checks.Float(31200), Limit: checks.Float(33000), Unit: "MiB", Source: "nvml_process"},
		},
	}
	if video {
		c.Modality = "video+audio"
	}
	for i, s := range specs {
		c.Requests = append(c.Requests, request(id, i+1, len(specs), video, s))
	}
	return c
}

var (
	good     = reqSpec{e2e: 65900, denoise: 52100, vram: 34560, ssim: 0.9812, psnr: 38.21}
	goodWarm = reqSpec{e2e: 65500, denoise: 51900, vram: 34560, ssim: 0.9809, psnr: 38.19}
)

func lane(name string, cases ...results.CaseResult) results.Result {
	r := results.Result{Schema: results.Schema, Suite: "ci", Lane: name, GPU: "h100", Commit: "4f1c2e9a7b3d5e6f7a8b9c0d1e2f3a4b5c6d7e8f",
		Partition: results.Partition{Index: 0, Total: 1}, StartedAt: start, Cases: cases}
	judge.Finalize(&r)
	return r
}

func passingReport() *Report {
	return &Report{Key: "base", RunURL: "https://github.com/o/r/actions/runs/77", RunLabel: "run #77",
		Lanes: []results.Result{lane("base",
			caseOf("qwen_image_t2i", false, good, goodWarm),
			caseOf("wan_t2v_audio", true, good, goodWarm),
		)}}
}

func failingReport() *Report {
	drift := goodWarm
	drift.ssim = 0.7280
	slow := goodWarm
	slow.e2e, slow.denoise, slow.vram, slow.leak = 81200, 67000, 37120, 2560
	loud := good
	loud.audioFail = true
	crashed := caseOf("flux_crash", false, good, reqSpec{crash: true})
	crashed.LogTail = []string{
		"[2025-03-01 12:00:01] INFO denoising step 49/50",
		"Fatal Python error: Segmentation fault",
		"Current thread 0x00007f (most recent call first):",
		"  File \"sglang/multimodal_gen/runtime/pipelines/denoise.py\", line 211 in forward",
	}
	startup := results.CaseResult{ID: "hunyuan_t2v", Server: "hunyuan", Lane: "base", Modality: "video",
		Checks: []results.Check{
			checks.Failed(results.ServerAlive,
				"server hunyuan exited before it was ready: exit status 1\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"),
		},
	}
	startup.Checks[0].Cause = "server failed to start, exit 1"
	return &Report{Key: "base", RunURL: "https://github.com/o/r/actions/runs/78", RunLabel: "run #78",
		FullURL: "https://github.com/o/r/actions/runs/78", ArtifactsURL: "https://github.com/o/r/actions/runs/78#artifacts",
		Lanes: []results.Result{lane("base",
			caseOf("qwen_image_t2i", false, good, drift),
			slowSteps(caseOf("wan_t2v_audio", true, loud, slow)),
			crashed,
			startup,
		)}}
}

// slowSteps gives the second request of c what a slow denoising stage brings along in a real
// run: its 50 steps slow alike, so the mean, the median and the sampled steps fail with it;
// and the baseline's spread, as a spread file records it — E2E and the stage with a MAD of
// 300 and 120 ms, a step with one of 0.4 ms (a GPU repeats a step to within the timer).
func slowSteps(c results.CaseResult) results.CaseResult {
	for i := range c.Requests {
		rr := &c.Requests[i]
		perStep := rr.Stages[1].Ms / 50
		for _, name := range []string{"perf.denoise_avg", "perf.denoise_median", "perf.step.0", "perf.step.24", "perf.step.49"} {
			ck := perfCheck(name, perStep, 1040)
			ck.Spread = &results.Spread{N: 6, Min: 1039, Median: 1040, Max: 1041, MAD: 0.4}
			rr.Checks = append(rr.Checks, ck)
		}
	}
	rr := &c.Requests[1]
	rr.Checks[3].Spread = &results.Spread{N: 6, Min: 64900, Median: 65600, Max: 66100, MAD: 300}
	rr.Checks[4].Spread = &results.Spread{N: 6, Min: 51800, Median: 52000, Max: 52200, MAD: 120}
	for i := range rr.Checks {
		ck := &rr.Checks[i]
		if ck.Status == results.Fail && ck.Baseline != nil {
			// As checks.limitCheck words it.
			ck.Detail = fmt.Sprintf("%s %.0f ms > limit %.0f ms (baseline %.0f ms, tolerance 10%%; %.1f%% over the baseline)",
				ck.Name, *ck.Value, *ck.Limit, *ck.Baseline, (*ck.Value / *ck.Baseline - 1)*100)
		}
	}
	return c
}

func knownReport() *Report {
	r := passingReport()
	c := &r.Lanes[0].Cases[1]
	// A known failure still failing, one that was fixed, on two requests each.
	for i := range c.Requests {
		rr := &c.Requests[i]
		for j := range rr.Checks {
			ck := &rr.Checks[j]
			switch ck.Name {
			case "audio.rms_db_diff":
				ck.Status, ck.Value = results.Known, checks.Float(5.2)
				ck.Known = &results.KnownFailure{
					Reason: "AAC encoder change in ffmpeg 7",
					Link:   "https://github.com/o/r/issues/12",
					Until:  "2025-06-01",
					State:  "known",
					Entry:  "known.yaml:1",
				}
			case "consistency.psnr":
				ck.Known = &results.KnownFailure{
					Reason: "PSNR drop after VAE tiling",
					Link:   "https://github.com/o/r/issues/9",
					Until:  "2025-05-01",
					State:  "fixed",
					Entry:  "known.yaml:6",
				}
			}
		}
	}
	// An expired entry: the failure counts.
	e2e := &r.Lanes[0].Cases[0].Requests[1].Checks[3]
	e2e.Status, e2e.Value = results.Fail, checks.Float(70100)
	e2e.Known = &results.KnownFailure{Reason: "slow warm-up on H100 PCIe", Until: "2025-02-01", State: "expired", Entry: "known.yaml:11"}
	e2e.Detail = "known failure expired on 2025-02-01"
	judge.Finalize(&r.Lanes[0])
	return r
}

func mixedReport() *Report {
	r := failingReport()
	extra := lane("extra", caseOf("sd3_t2i", false, good, goodWarm, good))
	// A missing baseline: a paste-ready snippet, and a possible improvement.
	rr := &extra.Cases[0].Requests[0]
	rr.Checks = append(rr.Checks, results.Check{Name: "perf.baseline", Status: results.Skip,
		Detail: "no baseline for sd3_t2i on h100; add to baselines/h100.yaml:\nsd3_t2i:\n  e2e_ms: 65900\n  stages_ms:\n    DenoisingStage: 52100\n"})
	rr.Checks[3].Note = "E2E 65.9 s is 12% under the baseline 75.0 s: consider lowering it"
	judge.Finalize(&extra)
	r.Lanes = append(r.Lanes, extra)
	r.Pending = []string{"amd"}
	r.Previous = &State{
		V: stateVersion,
		Lanes: []LaneState{
			{Name: "base", Status: results.Pass, RunURL: "https://github.com/o/r/actions/runs/70", RunLabel: "run #70"},
			{Name: "nightly", Status: results.Fail, RunURL: "https://github.com/o/r/actions/runs/60", RunLabel: "run #60"},
		},
		Failing: stateKeys([]string{"base/flux_crash/2", "base/qwen_image_t2i/1", "base/old_case/1"}),
	}
	return r
}

// hugeReport has n cases of 2 requests on two lanes, one case in ten failing with a
// 100-line log, a multi-line detail and a drifting second request.
func hugeReport(n int) *Report {
	var base, extra []results.CaseResult
	for i := range n {
		id := fmt.Sprintf("case_%03d_%s", i, strings.Repeat("x", i%7))
		c := caseOf(id, i%3 == 0, good, goodWarm)
		if i%10 == 0 {
			bad := goodWarm
			bad.ssim, bad.e2e = 0.81, 70500
			c = caseOf(id, i%3 == 0, good, bad)
			for k := range 100 {
				c.LogTail = append(c.LogTail, fmt.Sprintf("[worker %d] step %d/50 latency %.1f ms allocated %d MiB", k%4, k%50, 1020.5+float64(k), 30000+k))
			}
			c.Requests[1].Checks[6].Detail = "per-frame SSIM:\n" + strings.Repeat("frame 0.81 0.82 0.83 0.84 0.85 0.86 0.87 0.88\n", 40)
		}
		if i%2 == 0 {
			base = append(base, c)
		} else {
			c.Lane = "extra"
			extra = append(extra, c)
		}
	}
	return &Report{Key: "base", RunURL: "https://github.com/o/r/actions/runs/99", RunLabel: "run #99",
		FullURL: "https://github.com/o/r/actions/runs/99#summary",
		Lanes:   []results.Result{lane("base", base...), lane("extra", extra...)}}
}

// selectedReport: test-impact selection ran 2 of 5 cases of base and none of extra.
func selectedReport() *Report {
	sel := &results.Selection{Source: "pull request #12", ChangedFiles: 7, Selected: 2, Of: 5}
	base := lane("base",
		caseOf("qwen_image_t2i", false, good, goodWarm),
		caseOf("wan_t2v_audio", true, good, goodWarm),
	)
	base.Selection = sel
	base.Deselected = []results.Deselected{
		{Case: "flux_t2i", Lane: "base", Reason: "no changed path matches paths: python/sglang/multimodal_gen/runtime/models/**/*flux*"},
		{Case: "hunyuan_t2v", Lane: "base", Reason: "no changed path matches paths: python/models/hunyuan/** (docs/@team/_notes_.md is taken out by !**/*.md)"},
	}
	extra := lane("extra")
	extra.Selection = sel
	extra.Deselected = []results.Deselected{
		{Case: "minimax_h3_t2va_2gpu", Lane: "extra", Reason: "no changed path matches paths: python/sglang/multimodal_gen/**/*minimax_h3*"},
	}
	judge.Finalize(&extra)
	return &Report{Key: "base", RunURL: "https://github.com/o/r/actions/runs/77", RunLabel: "run #77", Lanes: []results.Result{base, extra}}
}
