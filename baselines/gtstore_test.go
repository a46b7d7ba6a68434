package baselines

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Rule: in SGLang's store layout (ci-data-diffusion's diffusion-ci/consistency_gt), a case's
// ground truth comes from official_generated when its case_map.json declares the file for the
// case, else from sglang_generated; each source is looked in under {platform}/ first. Source:
// test_utils.py _remote_consistency_gt_base_urls, _official_consistency_gt_candidate_is_declared,
// _load_official_consistency_gt_outputs (pandalee99/sglang @ cce0a1244).
func TestGroundTruthStoreSources(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("official_generated/case_map.json", `{"cases": {"flux_t2i": {"outputs": ["flux_t2i_1gpu.png"]}, "wan_t2v": {"outputs": []}}}`)
	write("official_generated/flux_t2i_1gpu.png", "o")
	write("official_generated/qwen_t2i_1gpu.png", "not declared")
	write("sglang_generated/flux_t2i_1gpu.png", "s")
	write("sglang_generated/qwen_t2i_1gpu.png", "s")
	write("sglang_generated/h100/wan_t2v_1gpu.mp4", "s")
	g := GroundTruth{Dir: dir, Platform: "h100"}
	for _, tt := range []struct {
		id, want, source string
		video            bool
	}{
		{"flux_t2i", "official_generated/flux_t2i_1gpu.png", gtOfficial, false},
		{"qwen_t2i", "sglang_generated/qwen_t2i_1gpu.png", gtSGLang, false},
		{"wan_t2v", "sglang_generated/h100/wan_t2v_1gpu.mp4", gtSGLang, true},
	} {
		e, err := g.Lookup(tt.id, 1, tt.video, "png")
		if err != nil {
			t.Errorf("%s: %v", tt.id, err)
			continue
		}
		if diff := cmp.Diff([2]string{filepath.Join(dir, tt.want), tt.source}, [2]string{e.Path, e.Source}); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.id, diff)
		}
	}
	_, err := g.Lookup("none", 1, false, "png")
	if err == nil || !strings.Contains(err.Error(), "sglang_generated/h100/none_1gpu.{png,jpg,webp}") {
		t.Errorf("no ground truth: %v", err)
	}
	// A plain folder is one source, named "".
	plain := GroundTruth{Dir: filepath.Join(dir, "sglang_generated")}
	if e, err := plain.Lookup("flux_t2i", 1, false, "png"); err != nil || e.Source != "" {
		t.Errorf("plain folder: %+v %v", e, err)
	}
	write("official_generated/case_map.json", `{"cases": [`)
	if _, err := g.Lookup("flux_t2i", 1, false, "png"); err == nil || !strings.Contains(err.Error(), "case_map.json") {
		t.Errorf("a malformed case map: %v", err)
	}
}

func TestGTSourceNote(t *testing.T) {
	for src, want := range map[string]string{
		gtOfficial: "ground truth: official_generated (made by the reference implementation)",
		gtSGLang:   "ground truth: sglang_generated (made by SGLang)",
	} {
		if got := GTSourceNote(src); got != want {
			t.Errorf("GTSourceNote(%q) = %q, want %q", src, got, want)
		}
	}
}
