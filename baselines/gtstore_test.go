package baselines

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Rule: in SGLang's store layout (ci-data-diffusion's diffusion-ci/consistency_gt), a case's
// ground truth comes from official_generated when its case_map.json declares the file for the
// case, else from sglang_generated; a plain folder is one source; a malformed case map is an
// error naming it. The order between the sources and their platform folders is
// TestGroundTruthStoreOrderRule's. Source: test_utils.py _remote_consistency_gt_base_urls,
// _official_consistency_gt_candidate_is_declared, _load_official_consistency_gt_outputs
// (pandalee99/sglang @ cce0a1244).
func TestGroundTruthStoreSources(t *testing.T) {
	g := storeOf(t, []string{
		"official_generated/flux_t2i_1gpu.png", "official_generated/qwen_t2i_1gpu.png",
		"sglang_generated/flux_t2i_1gpu.png", "sglang_generated/qwen_t2i_1gpu.png", "sglang_generated/h100/wan_t2v_1gpu.mp4",
	}, []byte(`{"cases": {"flux_t2i": {"outputs": ["flux_t2i_1gpu.png"]}, "wan_t2v": {"outputs": []}}}`))
	dir := g.Dir
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
	if err := os.WriteFile(filepath.Join(dir, "official_generated", "case_map.json"), []byte(`{"cases": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Lookup("flux_t2i", 1, false, "png"); err == nil || !strings.Contains(err.Error(), "case_map.json") {
		t.Errorf("a malformed case map: %v", err)
	}
}

// Rule: SGLang's store is read candidate set first, source inside: official/h100 →
// sglang/h100 → official/ → sglang/ (an Ascend case: official/ascend → sglang/ascend → official/
// → sglang/, no platform folder); official files count only where case_map.json declares them
// for the raw case id, as a name inside the source or a base name; the cases of
// OFFICIAL_CONSISTENCY_GT_SKIP_CASES never take official files. The store's real case_map.json
// and file names (testdata/ci-data-diffusion/SOURCES.md). Source: test_utils.py
// _find_remote_consistency_gt_files, get_consistency_gt_candidate_sets,
// _remote_consistency_gt_base_urls, _official_consistency_gt_candidate_is_declared,
// OFFICIAL_CONSISTENCY_GT_SKIP_CASES, _find_remote_audio_consistency_gt_files
// (pandalee99/sglang @ cce0a1244, 2026-08-23).
func TestGroundTruthStoreOrderRule(t *testing.T) {
	const source = "test_utils.py _find_remote_consistency_gt_files (pandalee99/sglang @ cce0a1244)"
	caseMap, err := os.ReadFile(filepath.Join("testdata", "ci-data-diffusion", "case_map.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The real map, plus entries the store does not have, to show the rules the real one does
	// not reach: a map keyed by an alias's target, an Ascend case, a name declared with its
	// platform folder, and a video with only one key frame declared.
	var m map[string]any
	if err := json.Unmarshal(caseMap, &m); err != nil {
		t.Fatal(err)
	}
	cases := m["cases"].(map[string]any)
	cases["zimage_image_t2i_2_gpus"] = map[string]any{"outputs": []string{"zimage_image_t2i_2_gpus_2gpu.jpg"}}
	cases["sd_npu_t2i"] = map[string]any{"outputs": []string{"sd_npu_t2i_1gpu.png"}}
	cases["dated_t2i"] = map[string]any{"outputs": []string{"h100/dated_t2i_1gpu.png"}}
	cases["partial_t2v"] = map[string]any{"outputs": []string{"partial_t2v_1gpu_frame_0.png"}}
	extended, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	frames := func(dir, stem string) []string {
		return []string{dir + stem + "_frame_0.png", dir + stem + "_frame_mid.png", dir + stem + "_frame_last.png"}
	}
	var files []string
	for _, f := range [][]string{
		{"official_generated/flux_image_t2i_1gpu.jpg", "sglang_generated/h100/flux_image_t2i_1gpu.jpg"},
		{"official_generated/qwen_image_t2i_1gpu.jpg", "sglang_generated/qwen_image_t2i_1gpu.jpg"},
		{"official_generated/h100/zimage_image_t2i_1gpu.jpg", "official_generated/zimage_image_t2i_1gpu.jpg", "sglang_generated/h100/zimage_image_t2i_1gpu.jpg"},
		{"official_generated/h100/qwen_image_edit_2509_ti2i_1gpu.jpg", "official_generated/qwen_image_edit_2509_ti2i_1gpu.jpg"},
		{"sglang_generated/qwen_image_edit_2509_ti2i_1gpu.jpg"},
		frames("official_generated/", "wan2_1_t2v_1.3b_1gpu"), frames("sglang_generated/h100/", "wan2_1_t2v_1.3b_1gpu"),
		frames("official_generated/", "ltx_2.3_one_stage_ti2v_2gpu"), frames("sglang_generated/", "ltx_2.3_one_stage_ti2v_2gpu"),
		frames("official_generated/h100/", "ltx_2_two_stage_t2v_2gpu"), frames("sglang_generated/h100/", "ltx_2_two_stage_t2v_2gpu"),
		frames("official_generated/", "ltx_2_3_hq_pipeline_1gpu"), frames("sglang_generated/", "ltx_2_3_hq_pipeline_1gpu"),
		{"official_generated/zimage_image_t2i_2_gpus_2gpu.jpg", "sglang_generated/zimage_image_t2i_2_gpus_2gpu.jpg"},
		{"official_generated/sd_npu_t2i_1gpu.png", "sglang_generated/ascend/sd_npu_t2i_1gpu.png", "sglang_generated/h100/sd_npu_t2i_1gpu.png"},
		{"official_generated/ascend/sd_npu_t2i_1gpu.png"},
		{"official_generated/dated_t2i_1gpu.png", "official_generated/h100/dated_t2i_1gpu.png", "sglang_generated/dated_t2i_1gpu.png"},
		frames("official_generated/", "partial_t2v_1gpu"), frames("sglang_generated/", "partial_t2v_1gpu"),
		{"official_generated/minimax_h3_t2va_1gpu_audio.wav", "sglang_generated/h100/minimax_h3_t2va_1gpu_audio.wav"},
	} {
		files = append(files, f...)
	}
	for _, tt := range []struct {
		name, id     string
		gpus         int
		video        bool
		noOfficialAt string // drop this official file first ("" keeps all)
		want, source string // the file found (the first key frame of key frames)
	}{
		{"a platform folder of sglang_generated before official_generated's root", "flux_image_t2i", 1, false, "",
			"sglang_generated/h100/flux_image_t2i_1gpu.jpg", gtSGLang},
		{"official_generated's root before sglang_generated's root", "qwen_image_t2i", 1, false, "",
			"official_generated/qwen_image_t2i_1gpu.jpg", gtOfficial},
		{"official_generated's platform folder first, declared by its base name", "zimage_image_t2i", 1, false, "",
			"official_generated/h100/zimage_image_t2i_1gpu.jpg", gtOfficial},
		{"a skip-list case with declared official files in h100/ and the root", "qwen_image_edit_2509_ti2i", 1, false, "",
			"sglang_generated/qwen_image_edit_2509_ti2i_1gpu.jpg", gtSGLang},
		{"a declared official video loses to sglang_generated/h100", "wan2_1_t2v_1.3b", 1, true, "",
			"sglang_generated/h100/wan2_1_t2v_1.3b_1gpu_frame_0.png", gtSGLang},
		{"a declared official video at the root before sglang_generated's root", "ltx_2.3_one_stage_ti2v", 2, true, "",
			"official_generated/ltx_2.3_one_stage_ti2v_2gpu_frame_0.png", gtOfficial},
		{"a skip-list video with undeclared official files in h100/", "ltx_2_two_stage_t2v", 2, true, "",
			"sglang_generated/h100/ltx_2_two_stage_t2v_2gpu_frame_0.png", gtSGLang},
		{"a skip-list video with declared official files", "ltx_2_3_hq_pipeline", 1, true, "",
			"sglang_generated/ltx_2_3_hq_pipeline_1gpu_frame_0.png", gtSGLang},
		{"an alias: case_map.json is read by the raw id, which declares nothing", "fsdp-inference", 2, false, "",
			"sglang_generated/zimage_image_t2i_2_gpus_2gpu.jpg", gtSGLang},
		{"the alias's target itself takes its declared official file", "zimage_image_t2i_2_gpus", 2, false, "",
			"official_generated/zimage_image_t2i_2_gpus_2gpu.jpg", gtOfficial},
		{"an Ascend case: official_generated/ascend first, no platform folder", "sd_npu_t2i", 1, false, "",
			"official_generated/ascend/sd_npu_t2i_1gpu.png", gtOfficial},
		{"an Ascend case: sglang_generated/ascend before official_generated's root", "sd_npu_t2i", 1, false,
			"official_generated/ascend/sd_npu_t2i_1gpu.png", "sglang_generated/ascend/sd_npu_t2i_1gpu.png", gtSGLang},
		{"a name declared with its platform folder", "dated_t2i", 1, false, "",
			"official_generated/h100/dated_t2i_1gpu.png", gtOfficial},
		{"a name declared with its platform folder does not declare the root's", "dated_t2i", 1, false,
			"official_generated/h100/dated_t2i_1gpu.png", "sglang_generated/dated_t2i_1gpu.png", gtSGLang},
		{"a video needs all three key frames declared", "partial_t2v", 1, true, "",
			"sglang_generated/partial_t2v_1gpu_frame_0.png", gtSGLang},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := storeOf(t, files, extended)
			if tt.noOfficialAt != "" {
				if err := os.Remove(filepath.Join(g.Dir, tt.noOfficialAt)); err != nil {
					t.Fatal(err)
				}
			}
			e, err := g.Lookup(tt.id, tt.gpus, tt.video, "jpeg")
			if err != nil {
				t.Fatalf("%s: %v", source, err)
			}
			got := e.Path
			if e.Kind == GTKeyFrames {
				got = e.KeyFrames[0]
			}
			if diff := cmp.Diff([2]string{filepath.Join(g.Dir, tt.want), tt.source}, [2]string{got, e.Source}); diff != "" {
				t.Errorf("%s (-want +got):\n%s", source, diff)
			}
			if !strings.HasPrefix(filepath.Join(g.Dir, e.Name), strings.TrimSuffix(filepath.Join(g.Dir, tt.want), "_frame_0.png")) {
				t.Errorf("Name %q does not name %s", e.Name, tt.want)
			}
		})
	}
	// Audio follows the same order (_find_remote_audio_consistency_gt_files); the official root
	// holds a track case_map.json does not declare.
	g := storeOf(t, files, extended)
	e, err := g.LookupAudio("minimax_h3_t2va", 1)
	if err != nil || e.Name != "sglang_generated/h100/minimax_h3_t2va_1gpu_audio.wav" || e.Source != gtSGLang {
		t.Errorf("audio: %+v, %v", e, err)
	}
}

// storeOf lays out files (each holding its own name) and case_map.json as SGLang's store.
func storeOf(t *testing.T, files []string, caseMap []byte) GroundTruth {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, data []byte) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("official_generated/case_map.json", caseMap)
	for _, f := range files {
		write(f, []byte(f))
	}
	return GroundTruth{Dir: dir, Platform: "h100"}
}

// TestGTEntryNote: each comparison's note names the file, relative to the ground-truth folder,
// and who made it.
func TestGTEntryNote(t *testing.T) {
	for _, tt := range []struct {
		e    GTEntry
		want string
	}{
		{GTEntry{Name: "official_generated/h100/x_1gpu.jpg", Source: gtOfficial},
			"ground truth: official_generated/h100/x_1gpu.jpg (made by the reference implementation)"},
		{GTEntry{Name: "sglang_generated/v_1gpu_frame_{0,mid,last}.png", Source: gtSGLang},
			"ground truth: sglang_generated/v_1gpu_frame_{0,mid,last}.png (made by SGLang)"},
		{GTEntry{Name: "h100/x_1gpu.png"}, "ground truth: h100/x_1gpu.png"},
	} {
		if got := tt.e.Note(); got != tt.want {
			t.Errorf("Note(%+v) = %q, want %q", tt.e, got, tt.want)
		}
	}
}
