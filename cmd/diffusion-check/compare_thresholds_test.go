package main

import (
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writePNG writes a 64x48 gradient, brighter by shift.
func writePNG(t *testing.T, path string, shift uint8) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for y := range 48 {
		for x := range 64 {
			img.Set(x, y, color.RGBA{uint8(x*3) + shift, uint8(y*5) + shift, uint8(x+y) + shift, 255})
		}
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
}

// TestCompareThresholds: compare judges against explicit limits or a case's limits from a
// thresholds folder, exits 1 below them and names the failed metrics.
func TestCompareThresholds(t *testing.T) {
	dir := t.TempDir()
	gt, out := filepath.Join(dir, "gt.png"), filepath.Join(dir, "out.png")
	writePNG(t, gt, 0)
	writePNG(t, out, 12) // mean abs diff 12: above SGLang's default 8 for images
	th := filepath.Join(dir, "thresholds")
	if err := os.MkdirAll(th, 0o755); err != nil {
		t.Fatal(err)
	}
	err := os.WriteFile(filepath.Join(th, "h100.json"),
		[]byte(`{"cases": {"loose": {"ssim_threshold": 0.1, "psnr_threshold": 5, "mean_abs_diff_threshold": 20}}}`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr string
	}{
		{"no thresholds only measures", nil, 0, []string{"mean_abs_diff 12.0000"}, ""},
		{"explicit limit met", []string{"--max-mad", "12.5"}, 0, []string{"consistency.mean_abs_diff: pass"}, ""},
		{"explicit limit missed, flag after the files", []string{"--min-ssim", "0.1", "--max-mad", "10"}, 1,
			[]string{"consistency.ssim: pass", "consistency.mean_abs_diff: fail"}, "below its thresholds: consistency.mean_abs_diff"},
		{"case from the folder", []string{"--thresholds", th, "--gpu", "h100", "--case", "loose"}, 0,
			[]string{"consistency.ssim: pass", "consistency.psnr: pass", "consistency.mean_abs_diff: pass"}, ""},
		{"explicit limit overrides the case's", []string{"--thresholds", th, "--gpu", "h100", "--case", "loose", "--max-mad", "5"}, 1,
			[]string{"consistency.mean_abs_diff: fail"}, "consistency.mean_abs_diff"},
		{"unknown case gets SGLang's defaults", []string{"--case", "other"}, 1, []string{"consistency.mean_abs_diff: fail"}, ""},
		{"--gpu without --case", []string{"--gpu", "h100"}, 2, nil, "give --case ID too"},
		{"not a number", []string{"--min-ssim", "high"}, 2, nil, `want a number, got "high"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"compare", gt, out}, tc.args...)
			code, stdout, stderr := cli(t, nil, args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			for _, w := range tc.stdout {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, stderr)
			}
		})
	}
}
