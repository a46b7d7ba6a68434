package baselines

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/google/go-cmp/cmp"
)

func TestThresholdsSGLangFilesLoad(t *testing.T) {
	dir := filepath.Join(sglangDir, "consistency_thresholds")
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no threshold files in %s: %v", dir, err)
	}
	for _, f := range files {
		th, err := LoadThresholds(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		t.Logf("%s: %d cases, %d defaults", filepath.Base(f), len(th.Cases), len(th.Defaults))
	}
	h100, err := ThresholdsFor(dir, "h100")
	if err != nil {
		t.Fatal(err)
	}
	if len(h100.Cases) != 49 {
		t.Errorf("h100.json: %d cases, want 49", len(h100.Cases))
	}
	got := h100.For("qwen_image_t2i", false)
	want := checks.ConsistencyLimits{SSIM: 0.83, PSNR: 16, MeanAbsDiff: 13.3, CLIP: 0.97, Origin: "h100.json: cases.qwen_image_t2i"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("qwen_image_t2i (-want +got):\n%s", diff)
	}
	got = h100.For("not_a_case", true)
	want = checks.ConsistencyLimits{SSIM: 0.92, PSNR: 24, MeanAbsDiff: 10, CLIP: 0.90, Origin: "h100.json: file defaults"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("default video (-want +got):\n%s", diff)
	}
	b200, err := ThresholdsFor(dir, "b200")
	if err != nil {
		t.Fatal(err)
	}
	got = b200.For("anything", false)
	// b200.json is {}: h100.json's defaults apply (merged, as SGLang's harness does).
	want = checks.ConsistencyLimits{SSIM: 0.95, PSNR: 28, MeanAbsDiff: 8, CLIP: 0.92, Origin: "h100.json: file defaults"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("b200 image (-want +got):\n%s", diff)
	}
	a := b200.AudioFor("anything")
	wantA := checks.AudioLimits{SpectralSimilarity: 0.95, WaveformCorrelation: 0.9, RMSdBDiff: 2, DurationDiffS: 0.1, Origin: "b200.json: built-in defaults"}
	if diff := cmp.Diff(wantA, a); diff != "" {
		t.Errorf("b200 audio (-want +got):\n%s", diff)
	}
	none, err := ThresholdsFor(dir, "h200")
	if err != nil {
		t.Fatal(err)
	}
	if o := none.For("x", true).Origin; o != "h100.json: file defaults" {
		t.Errorf("origin without a file for the GPU: %q", o)
	}
}

func TestThresholdsPrecedence(t *testing.T) {
	th, err := parseThresholds("t.json", []byte(`{
  "_comment": "per case, then file default, then built-in",
  "cases": {
    "c": {"ssim_threshold": 0.5, "audio_rms_db_diff_threshold": 3.5, "_note": "measured"}
  },
  "default_psnr_threshold_video": 20,
  "default_audio_duration_diff_threshold": 0.25
}`))
	if err != nil {
		t.Fatal(err)
	}
	got := th.For("c", true)
	want := checks.ConsistencyLimits{SSIM: 0.5, PSNR: 20, MeanAbsDiff: 10, CLIP: 0.9,
		Origin: "cases.c (ssim), file defaults (psnr), built-in defaults (mean_abs_diff, clip) (no thresholds file)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	a := th.AudioFor("c")
	if a.RMSdBDiff != 3.5 || a.DurationDiffS != 0.25 || a.SpectralSimilarity != 0.95 || a.WaveformCorrelation != 0.9 {
		t.Errorf("audio limits %+v", a)
	}
}

func TestThresholdsErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"every problem with its line", `{
  "cases": {
    "a": {"ssim_treshold": 0.9},
    "b": {"psnr_threshold": "high", "clip_threshold": 1.5}
  },
  "default_ssim_threshold_imag": 0.9,
  "default_mean_abs_diff_threshold_video": -1
}`, []string{
			`t.json:3: cases.a: unknown key "ssim_treshold"`,
			`t.json:4: cases.b.psnr_threshold: want a number, got a string`,
			`t.json:4: cases.b.clip_threshold: must be between -1 and 1, got 1.5`,
			`t.json:6: default_ssim_threshold_imag: unknown key`,
			`t.json:7: default_mean_abs_diff_threshold_video: must be between 0 and 255, got -1`,
		}},
		{"syntax", "{\n  \"cases\": {,\n}", []string{"t.json:2: invalid JSON: invalid character"}},
		{"not an object", `[1]`, []string{"t.json:1: (top level): want an object"}},
		{"trailing data", `{} {}`, []string{"t.json:1: invalid JSON: data after the top-level value"}},
		{"duplicate", "{\"cases\": {},\n\"cases\": {}}", []string{`t.json:2: duplicate key "cases", first at line 1`}},
		{"truncated", "{\"cases\": {\"a\": {", []string{"t.json:1: invalid JSON: unexpected end of JSON"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseThresholds("t.json", []byte(tc.src))
			if err == nil {
				t.Fatal("no error")
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tc.want) {
				t.Errorf("got %d problems, want %d:\n%v", len(lines), len(tc.want), err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
		})
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "h100.json")
	if err := os.WriteFile(f, []byte("{\n\"x\": 1}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ThresholdsFor(dir, "h100"); err == nil || !strings.HasPrefix(err.Error(), f+":2: x: unknown key") {
		t.Errorf("error %v, want prefixed with %s:2", err, f)
	}
	if _, err := ThresholdsFor(dir, ""); err == nil || !strings.Contains(err.Error(), "GPU class is unknown") {
		t.Errorf("folder without GPU: %v", err)
	}
}

func FuzzParseThresholds(f *testing.F) {
	f.Add([]byte(`{"cases":{"a":{"ssim_threshold":0.9}},"default_clip_threshold_image":0.9}`))
	f.Add([]byte(`{"_c":[1,{"x":2}],"cases":{}}`))
	f.Add([]byte(`{"cases":{"a":{"ssim_threshold":"x"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		th, err := parseThresholds("fuzz.json", b)
		if err != nil {
			return
		}
		for id := range th.Cases {
			th.For(id, true)
			th.AudioFor(id)
		}
	})
}
