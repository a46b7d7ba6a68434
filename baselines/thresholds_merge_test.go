package baselines

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/google/go-cmp/cmp"
)

// sglangThresholds is SGLang's consistency_thresholds folder, copied into testdata (see
// testdata/sglang/SOURCES.md).
const sglangThresholds = "testdata/sglang/consistency_thresholds"

// Rule: the thresholds of any GPU are h100.json with the GPU's own file merged on top: a case
// entry replaces the whole h100 entry, top-level keys override, a missing file is {}.
// Source: SGLang test/test_utils.py @ a9a355774a79, _load_threshold_json,
// _merge_threshold_metadata, get_consistency_thresholds.
func TestThresholdsMergeRule(t *testing.T) {
	const source = "test_utils.py @ a9a355774a79, _merge_threshold_metadata"
	synthetic := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(synthetic, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("h100.json", `{"cases": {"c": {"ssim_threshold": 0.5, "psnr_threshold": 11, "audio_rms_db_diff_threshold": 4}},
 "default_psnr_threshold_video": 20, "default_ssim_threshold_video": 0.8,
 "default_audio_rms_db_diff_threshold": 3, "default_audio_duration_diff_threshold": 0.3}`)
	write("l40.json", `{"cases": {"c": {"ssim_threshold": 0.6}}, "default_psnr_threshold_video": 22,
 "default_audio_duration_diff_threshold": 0.2}`)
	only := t.TempDir()
	if err := os.WriteFile(filepath.Join(only, "l40.json"), []byte(`{"default_psnr_threshold_video": 22}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		input    string
		dir, gpu string
		caseID   string
		video    bool
		want     checks.ConsistencyLimits
	}{
		{"5090: its own entry", sglangThresholds, "5090", "zimage_image_t2i", false,
			checks.ConsistencyLimits{SSIM: 0.86, PSNR: 19.5, MeanAbsDiff: 8.5, CLIP: 0.92, Origin: "5090.json: cases.zimage_image_t2i"}},
		{"5090: a case only h100.json lists gets h100's entry", sglangThresholds, "5090", "qwen_image_t2i", false,
			checks.ConsistencyLimits{SSIM: 0.83, PSNR: 16, MeanAbsDiff: 13.3, CLIP: 0.97, Origin: "h100.json: cases.qwen_image_t2i"}},
		{"b200 (no cases): h100's entry", sglangThresholds, "b200", "qwen_image_t2i", false,
			checks.ConsistencyLimits{SSIM: 0.83, PSNR: 16, MeanAbsDiff: 13.3, CLIP: 0.97, Origin: "h100.json: cases.qwen_image_t2i"}},
		{"b200: h100's file defaults", sglangThresholds, "b200", "not_a_case", true,
			checks.ConsistencyLimits{SSIM: 0.92, PSNR: 24, MeanAbsDiff: 10, CLIP: 0.90, Origin: "h100.json: file defaults"}},
		{"intel_xpu_b60: its own entry", sglangThresholds, "intel_xpu_b60", "fsdp-inference", false,
			checks.ConsistencyLimits{SSIM: 0.6, PSNR: 11, MeanAbsDiff: 37, CLIP: 0.97, Origin: "intel_xpu_b60.json: cases.fsdp-inference"}},
		{"h200 (no file: {}): h100's entry", sglangThresholds, "h200", "qwen_image_t2i", false,
			checks.ConsistencyLimits{SSIM: 0.83, PSNR: 16, MeanAbsDiff: 13.3, CLIP: 0.97, Origin: "h100.json: cases.qwen_image_t2i"}},
		{"an entry replaces the whole h100 entry, not metric by metric", synthetic, "l40", "c", true,
			checks.ConsistencyLimits{SSIM: 0.6, PSNR: 22, MeanAbsDiff: 10, CLIP: 0.90,
				Origin: "l40.json: cases.c (ssim), l40.json: file defaults (psnr), built-in defaults (mean_abs_diff, clip)"}},
		{"top-level keys override, the others stay h100's", synthetic, "l40", "d", true,
			checks.ConsistencyLimits{SSIM: 0.8, PSNR: 22, MeanAbsDiff: 10, CLIP: 0.90,
				Origin: "h100.json: file defaults (ssim), l40.json: file defaults (psnr), built-in defaults (mean_abs_diff, clip)"}},
		{"h100 itself: no merge", synthetic, "h100", "c", true,
			checks.ConsistencyLimits{SSIM: 0.5, PSNR: 11, MeanAbsDiff: 10, CLIP: 0.90,
				Origin: "h100.json: cases.c (ssim, psnr), built-in defaults (mean_abs_diff, clip)"}},
		{"no h100.json: the GPU's file on {}", only, "l40", "c", true,
			checks.ConsistencyLimits{SSIM: 0.92, PSNR: 22, MeanAbsDiff: 10, CLIP: 0.90,
				Origin: "built-in defaults (ssim, mean_abs_diff, clip), l40.json: file defaults (psnr)"}},
	} {
		t.Run(tt.input, func(t *testing.T) {
			th, err := ThresholdsFor(tt.dir, tt.gpu)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, th.For(tt.caseID, tt.video)); diff != "" {
				t.Errorf("%s (%s) (-want +got):\n%s", tt.input, source, diff)
			}
		})
	}
	// Audio thresholds follow the same merge.
	th, err := ThresholdsFor(synthetic, "l40")
	if err != nil {
		t.Fatal(err)
	}
	a := th.AudioFor("c")
	want := checks.AudioLimits{SpectralSimilarity: 0.95, WaveformCorrelation: 0.9, RMSdBDiff: 3, DurationDiffS: 0.2,
		Origin: "built-in defaults (audio_spectral_similarity, audio_waveform_correlation), h100.json: file defaults (audio_rms_db_diff), l40.json: " +
			"file defaults (audio_duration_diff)"}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("audio (-want +got):\n%s", diff)
	}
	// The h100 case entry's audio key is gone with the entry l40.json replaced.
	if a := th.AudioFor("c"); a.RMSdBDiff == 4 {
		t.Error("audio: the replaced h100 entry still applies")
	}
}

// Every real SGLang threshold file loads, alone and merged on h100.json.
func TestThresholdsSGLangFilesMerged(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(sglangThresholds, "*.json"))
	if err != nil || len(files) != 5 {
		t.Fatalf("want SGLang's 5 threshold files in %s, got %v (%v)", sglangThresholds, files, err)
	}
	h100, err := LoadThresholds(filepath.Join(sglangThresholds, "h100.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		own, err := LoadThresholds(f)
		if err != nil {
			t.Fatal(err)
		}
		gpu := filepath.Base(f[:len(f)-len(".json")])
		th, err := ThresholdsFor(sglangThresholds, gpu)
		if err != nil {
			t.Fatal(err)
		}
		// Every case of either file has an entry: 47–49 h100 cases no longer fall back to
		// the built-in defaults on a smaller GPU.
		for id := range h100.Cases {
			if _, ok := th.Cases[id]; !ok {
				t.Errorf("%s: case %s of h100.json lost", gpu, id)
			}
		}
		for id, e := range own.Cases {
			if !cmp.Equal(th.Cases[id], e) {
				t.Errorf("%s: case %s = %v, want the GPU file's %v", gpu, id, th.Cases[id], e)
			}
		}
	}
}
