package checks

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/results"
)

// SGLang's verdict rules on the perf checks, the retry and the output shape (docs/sglang-compat.md,
// "Verdict rules"), each at its boundary, with the SGLang source it follows.
// test_server_utils.py, test_server_common.py and testcase_configs.py are SGLang's
// python/sglang/multimodal_gen/test/server/ files at a7ec6b97f786 (2026-08-21); PR #39206
// is known from its description and its tests, not its code (docs/sglang-compat.md).

// Rule: a stage of the denoising role (a name ending in "DenoisingStage") is checked with the
// denoise_stage tolerance; others keep non_denoise_stage. Source: PR #39206 ("Apply denoising
// tolerances by stage role").
func TestStageRoleRule(t *testing.T) {
	const src = "PR #39206, stage role; PerformanceValidator._validate_stages, test_server_utils.py @ a7ec6b97f786"
	b := with(func(b *PerfBaseline) {
		b.Stages = results.Stages{
			{Name: "LTX2AVDenoisingStage", Ms: 1000},
			{Name: "DmdDenoisingStage", Ms: 1000},
			{Name: "QwenImageLayeredBeforeDenoisingStage", Ms: 1000},
			{Name: "TextEncodingStage", Ms: 1000},
		}
	})
	denoise := PerfLimit(1000, 0.25, StagePadMs) // 1250
	other := PerfLimit(1000, 0.8, StagePadMs)    // 1800
	stage := func(name string, ms float64) []results.Check {
		got := results.Stages{{Name: "LTX2AVDenoisingStage", Ms: 1}, {Name: "DmdDenoisingStage", Ms: 1}, {Name: "QwenImageLayeredBeforeDenoisingStage",
			Ms: 1}, {Name: "TextEncodingStage", Ms: 1}}
		for i := range got {
			if got[i].Name == name {
				got[i].Ms = ms
			}
		}
		return StageChecks(got, b)
	}
	runRules(t, []ruleTable{{"stage role", src, []ruleCase{
		{"LTX2AVDenoisingStage at the denoise limit", stage("LTX2AVDenoisingStage", denoise), "perf.stage.LTX2AVDenoisingStage", results.Pass, "tolerance 25%"},
		{"LTX2AVDenoisingStage one ulp over", stage("LTX2AVDenoisingStage", up(denoise)), "perf.stage.LTX2AVDenoisingStage", results.Fail, ""},
		{"DmdDenoisingStage under the old 0.8 limit still fails", stage("DmdDenoisingStage", 1700), "perf.stage.DmdDenoisingStage", results.Fail,
			"tolerance 25%"},
		{
			"a BeforeDenoisingStage ends in the role's suffix",
			stage("QwenImageLayeredBeforeDenoisingStage", up(denoise)),
			"perf.stage.QwenImageLayeredBeforeDenoisingStage",
			results.Fail,
			"",
		},
		{"TextEncodingStage keeps non_denoise_stage", stage("TextEncodingStage", other), "perf.stage.TextEncodingStage", results.Pass, "tolerance 80%"},
		{"TextEncodingStage one ulp over", stage("TextEncodingStage", up(other)), "perf.stage.TextEncodingStage", results.Fail, ""},
	}}})
}

// Rule: with run_perf_check=False (checks.perf: false) the E2E time is still checked, alone:
// no stage, step or aggregate is needed, and a missing value or a bad baseline fails. Source:
// PR #39206 (test_e2e_only_does_not_require_stage_metrics, and e2e_only_* of
// test_performance_failure_survives_real_pytest_runner).
func TestE2EOnlyRule(t *testing.T) {
	const src = "PR #39206: test_e2e_only_does_not_require_stage_metrics, e2e_only_* problems"
	b := with(func(b *PerfBaseline) { b.E2EMs = 1000 })
	limit := PerfLimit(1000, 0.25, E2EPadMs)
	e2e := func(ms float64, b PerfBaseline) []results.Check {
		return PerfE2EOnly(results.RequestResult{ServerTotalMs: ms}, b)
	}
	runRules(t, []ruleTable{{"E2E on every case", src, []ruleCase{
		{"at the limit, no stages or steps in the record", e2e(limit, b), PerfE2E, results.Pass, ""},
		{"one ulp over (e2e_only_regression)", e2e(up(limit), b), PerfE2E, results.Fail, ""},
		{"no stage checks", e2e(limit, b), "perf.stage.DenoisingStage", "", ""},
		{"no aggregate checks", e2e(limit, b), PerfDenoiseAvg, "", ""},
		{"E2E missing (missing_e2e)", e2e(0, b), PerfE2E, results.Fail, "E2E duration missing"},
		{"zero baseline (e2e_only_zero_baseline)", e2e(900, with(func(b *PerfBaseline) { b.E2EMs = 0 })), PerfE2E, results.Fail, "cannot be checked"},
		{"NaN baseline (e2e_only_nan_baseline)", e2e(900, with(func(b *PerfBaseline) { b.E2EMs = math.NaN() })), PerfE2E, results.Fail, "no baseline value"},
		{
			"AMD: over the AMD limit only warns",
			e2e(up(PerfLimit(1000, 1, E2EPadMs)), with(func(b *PerfBaseline) { b.E2EMs, b.ROCm = 1000, true })),
			PerfE2E,
			results.Pass,
			"> limit 2000 ms",
		},
		{"AMD: a missing E2E still fails", e2e(0, with(func(b *PerfBaseline) { b.E2EMs, b.ROCm = 1000, true })), PerfE2E, results.Fail, "E2E duration missing"},
	}}})
}

// Rule: the expected output size is the requested one, times upscaling_scale (default 4) when
// enable_upscaling is truthy, except for an image edit; a text-to-video case with a truthy
// enable_frame_interpolation has (n − 1)·2^exp + 1 frames (exp default 1); no other frame
// count is checked. Source: get_generate_fn (generate_image, generate_image_edit,
// generate_video, _create_and_download_video), test_server_utils.py @ a7ec6b97f786.
func TestOutputShapeRule(t *testing.T) {
	const src = "get_generate_fn, test_server_utils.py @ a7ec6b97f786"
	up4 := map[string]any{"enable_upscaling": true, "upscaling_scale": 4}
	interp := map[string]any{"enable_frame_interpolation": true, "frame_interpolation_exp": 1}
	for _, tt := range []struct {
		input               string
		req                 ShapeRequest
		w, h, frames        int
		wantProblems        int
		wantProblemContains string
	}{
		{"flux_2_image_t2i_upscaling_4x: 1024x1024 × 4", ShapeRequest{Width: 1024, Height: 1024, Extra: up4}, 4096, 4096, 0, 0, ""},
		{"upscaled, but at the requested size", ShapeRequest{Width: 1024, Height: 1024, Extra: up4}, 1024, 1024, 0, 1, "want 4096x4096"},
		{"default scale 4", ShapeRequest{Width: 64, Height: 32, Extra: map[string]any{"enable_upscaling": true}}, 256, 128, 0, 0, ""},
		{"scale 2", ShapeRequest{Width: 64, Height: 32, Extra: map[string]any{"enable_upscaling": 1, "upscaling_scale": 2}}, 128, 64, 0, 0, ""},
		{"enable_upscaling false", ShapeRequest{Width: 64, Height: 32, Extra: map[string]any{"enable_upscaling": false, "upscaling_scale": 4}}, 64, 32, 0,
			0, ""},
		{"an image edit is not upscaled", ShapeRequest{Width: 64, Height: 32, Edit: true, Extra: up4}, 64, 32, 0, 0, ""},
		{"a video is upscaled", ShapeRequest{Width: 832, Height: 480, Video: true, NumFrames: 81, Extra: up4}, 3328, 1920, 7, 0, ""},
		{"no frame count without interpolation", ShapeRequest{Width: 64, Height: 64, Video: true, NumFrames: 81}, 64, 64, 80, 0, ""},
		{"2× interpolation of 33 frames: 65", ShapeRequest{Width: 64, Height: 64, Video: true, NumFrames: 33, Extra: interp}, 64, 64, 65, 0, ""},
		{"2× interpolation, one frame short", ShapeRequest{Width: 64, Height: 64, Video: true, NumFrames: 33, Extra: interp}, 64, 64, 64, 1, "want 65"},
		{"exp 2 of 33 frames: 129", ShapeRequest{Width: 64, Height: 64, Video: true, NumFrames: 33,
			Extra: map[string]any{"enable_frame_interpolation": true, "frame_interpolation_exp": 2}}, 64, 64, 129, 0, ""},
		{"interpolation and upscaling", ShapeRequest{Width: 64, Height: 64, Video: true, NumFrames: 33,
			Extra: map[string]any{"enable_frame_interpolation": true, "enable_upscaling": true}}, 256, 256, 65, 0, ""},
		{"image to video: no frame count", ShapeRequest{Width: 64, Height: 64, Video: true, ImageToVideo: true, NumFrames: 33, Extra: interp}, 64, 64, 40,
			0, ""},
		{"no num_frames: no frame count", ShapeRequest{Width: 64, Height: 64, Video: true, Extra: interp}, 64, 64, 40, 0, ""},
		{"no size: none checked", ShapeRequest{Video: true, Extra: up4}, 7, 9, 1, 0, ""},
	} {
		s, err := ExpectedShape(tt.req)
		if err != nil {
			t.Fatalf("%s (%s): %v", tt.input, src, err)
		}
		p := s.Problems(tt.w, tt.h, tt.frames)
		if len(p) != tt.wantProblems || tt.wantProblemContains != "" && !strings.Contains(strings.Join(p, "; "), tt.wantProblemContains) {
			t.Errorf("%s (%s): problems %q, want %d containing %q", tt.input, src, p, tt.wantProblems, tt.wantProblemContains)
		}
	}
	if _, err := ExpectedShape(ShapeRequest{Width: 8, Height: 8, Extra: map[string]any{"enable_upscaling": true, "upscaling_scale": "4"}}); err == nil ||
		!strings.Contains(err.Error(), "upscaling_scale") {
		t.Errorf("a scale that is not a number (%s): %v", src, err)
	}
}

// Rule: Python's truth value decides enable_upscaling and enable_frame_interpolation.
// Source: extras.get(...) in an if, get_generate_fn, test_server_utils.py @ a7ec6b97f786.
func TestTruthyRule(t *testing.T) {
	for _, tt := range []struct {
		v    any
		want bool
	}{{nil, false}, {false, false}, {true, true}, {0, false}, {1, true}, {0.0, false}, {0.5, true}, {"", false}, {"no", true},
		{[]any{}, false}, {[]any{0}, true}, {map[string]any{}, false}, {math.NaN(), true}} {
		if got := truthy(tt.v); got != tt.want {
			t.Errorf("truthy(%#v) = %v, want %v (Python bool())", tt.v, got, tt.want)
		}
	}
}

// Rule: on CUDA, a perf-checked scenario without load_peak_vram_mb or runtime_peak_vram_mb
// fails. Source: DiffusionServerBase._validate_and_record, test_server_common.py @
// a7ec6b97f786 ("is missing a load/runtime peak VRAM baseline").
func TestMissingVRAMBaselineRule(t *testing.T) {
	const src = "_validate_and_record, test_server_common.py @ a7ec6b97f786"
	both := MemoryBaseline{LoadPeakMiB: 1000, RuntimePeakMiB: 2000}
	noLoad := MemoryBaseline{LoadPeakMiB: math.NaN(), RuntimePeakMiB: 2000}
	noRuntime := MemoryBaseline{LoadPeakMiB: 1000, RuntimePeakMiB: math.NaN()}
	none := NoMemoryBaseline()
	measured := map[string]float64{SourceServerReserved: 1234}
	runRules(t, []ruleTable{{"missing VRAM baseline", src, []ruleCase{
		{"both baselines: no failure", MissingVRAMBaseline("h100.json", "s", both, measured), MemoryLoadPeak, "", ""},
		{"both baselines: no runtime failure", MissingVRAMBaseline("h100.json", "s", both, measured), MemoryRuntimePeak, "", ""},
		{
			"no load baseline",
			MissingVRAMBaseline("h100.json", "s", noLoad, measured),
			MemoryLoadPeak,
			results.Fail,
			"Testcase 's' is missing a load/runtime peak VRAM baseline in h100.json: the scenario has no load_peak_vram_mb (measured 1234 MiB)",
		},
		{"no runtime baseline", MissingVRAMBaseline("h100.json", "s", noRuntime, nil), MemoryRuntimePeak, results.Fail, "no runtime_peak_vram_mb"},
		{"no runtime baseline: load is fine", MissingVRAMBaseline("h100.json", "s", noRuntime, nil), MemoryLoadPeak, "", ""},
		{"neither", MissingVRAMBaseline("h100.json", "s", none, nil), MemoryRuntimePeak, results.Fail, "missing a load/runtime peak VRAM baseline"},
	}}})
}

// Rule: a perf record with an impossible value fails perf.record naming the field, and keeps
// the value. Source: PR #39206 ("Fail on missing, non-finite or non-positive measurements").
func TestImpossiblePerfRecordRule(t *testing.T) {
	const src = "PR #39206, non-finite or non-positive measurements"
	runRules(t, []ruleTable{{"impossible perf record", src, []ruleCase{
		{"plausible values", []results.Check{PerfRecordJoined(12.5, 3, 4, nil)}, results.PerfRecord, results.Pass, "3 stages, 4 denoise steps"},
		{
			"a negative step",
			[]results.Check{PerfRecordJoined(12.5, 3, 4, []string{"steps[2] = -1"})},
			results.PerfRecord,
			results.Fail,
			"impossible values in the perf record: steps[2] = -1",
		},
	}}})
	c := PerfRecordJoined(12.5, 3, 4, []string{"total_duration_ms = -12.5"})
	if diff := cmp.Diff(Float(12.5), c.Value); diff != "" {
		t.Errorf("the value is kept (-want +got):\n%s", diff)
	}
}
