package baselines

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestQualityThresholdsAsSGLang: SGLang's own quality_thresholds.json reads as its
// load_quality_thresholds resolves it (defaults overlaid by the case's entry; a case without
// an entry enforces nothing; comments ignored); a case's null lifts a default floor; a key
// SGLang would ignore is refused, naming file, line and key.
func TestQualityThresholdsAsSGLang(t *testing.T) {
	q, err := LoadQualityThresholds(filepath.Join("testdata", "sglang", "quality_thresholds.json"))
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]QualityFloors{
		"flux_2_klein_image_t2i": {"clip_score": 15, "image_reward": -1.3},
		"flux2_dev_image_t2i":    {"clip_score": 20},
		"qwen_image_t2i":         {},
	} {
		if diff := cmp.Diff(want, q.For(id)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", id, diff)
		}
	}
	if f := (*QualityThresholds)(nil).For("x"); len(f) != 0 {
		t.Errorf("no file: %v", f)
	}

	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	q, err = LoadQualityThresholds(write("overlay.json", `{"defaults": {"min_clip_score": 15, "min_clip_iqa": 0.4},
 "cases": {"a": {"min_clip_iqa": null, "min_image_reward": -1}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(QualityFloors{"clip_score": 15, "image_reward": -1}, q.For("a")); diff != "" {
		t.Errorf("overlay (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(QualityFloors{"clip_score": 15, "clip_iqa": 0.4}, q.For("b")); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	_, err = LoadQualityThresholds(write("bad.json", `{"defaults": {},
 "cases": {"a": {"min_clip_scor": 15, "min_image_reward": "high"}},
 "case": {}}`))
	for _, want := range []string{
		`bad.json:2: cases.a: unknown key "min_clip_scor" (allowed: min_clip_score, min_clip_iqa, min_image_reward, and keys starting with _)`,
		`bad.json:2: cases.a.min_image_reward: want a number or null, got a string`,
		`bad.json:3: case: unknown key (allowed: defaults, cases, and keys starting with _)`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}
