package baselines

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGroundTruthNames(t *testing.T) {
	got := []string{
		ImageName("flux_t2i", 1, "png"), ImageName("flux_t2i", 2, "jpeg"), ImageName("x", 1, ""), ImageName("x", 0, "webp"),
		VideoName("wan_t2v", 4),
	}
	kf := KeyFrameNames("wan_t2v", 1)
	got = append(got, kf[:]...)
	want := []string{
		"flux_t2i_1gpu.png", "flux_t2i_2gpu.jpg", "x_1gpu.jpg", "x_1gpu.webp",
		"wan_t2v_4gpu.mp4",
		"wan_t2v_1gpu_frame_0.png", "wan_t2v_1gpu_frame_mid.png", "wan_t2v_1gpu_frame_last.png",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([3]int{0, 40, 80}, KeyFrameIndices(81)); diff != "" {
		t.Errorf("key frames of 81: %s", diff)
	}
	if diff := cmp.Diff([3]int{0, 0, 0}, KeyFrameIndices(1)); diff != "" {
		t.Errorf("key frames of 1: %s", diff)
	}
}

func TestGroundTruthLookup(t *testing.T) {
	dir := t.TempDir()
	g := GroundTruth{Dir: dir}
	touch := func(names ...string) {
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(dir, n), []byte(n), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Nothing: a NotFoundError listing what was tried, in SGLang's order.
	_, err := g.Lookup("img", 1, false, "jpeg")
	var nf *NotFoundError
	if !errors.As(err, &nf) || err.Error() != "no ground truth at "+filepath.Join(dir, "img_1gpu.{jpg,png,webp}") {
		t.Errorf("missing image: %v", err)
	}
	_, err = g.Lookup("vid", 2, true, "")
	if !errors.As(err, &nf) || !strings.HasSuffix(err.Error(), "vid_2gpu{.mp4,_frame_0.png,_frame_mid.png,_frame_last.png}") {
		t.Errorf("missing video: %v", err)
	}

	// The preferred extension first, then png, jpg, webp.
	touch("img_1gpu.webp", "img_1gpu.png")
	e, err := g.Lookup("img", 1, false, "webp")
	if err != nil || e.Path != filepath.Join(dir, "img_1gpu.webp") || e.Kind != GTImage {
		t.Errorf("webp preferred: %+v, %v", e, err)
	}
	e, err = g.Lookup("img", 1, false, "jpeg")
	if err != nil || e.Path != filepath.Join(dir, "img_1gpu.png") {
		t.Errorf("jpeg falls back to png: %+v, %v", e, err)
	}

	// Incomplete key frames are not a ground truth (SGLang's gt_exists wants the whole set):
	// not found, naming the missing ones.
	touch("vid_1gpu_frame_0.png", "vid_1gpu_frame_last.png")
	_, err = g.Lookup("vid", 1, true, "")
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), "key frames vid_1gpu_frame_mid.png missing") {
		t.Errorf("incomplete key frames: %v", err)
	}
	touch("vid_1gpu_frame_mid.png")
	e, err = g.Lookup("vid", 1, true, "")
	if err != nil || e.Kind != GTKeyFrames || e.KeyFrames[1] != filepath.Join(dir, "vid_1gpu_frame_mid.png") {
		t.Errorf("key frames: %+v, %v", e, err)
	}
	// A whole video wins over key frames.
	touch("vid_1gpu.mp4")
	e, err = g.Lookup("vid", 1, true, "")
	if err != nil || e.Kind != GTVideo || e.Path != filepath.Join(dir, "vid_1gpu.mp4") {
		t.Errorf("whole video: %+v, %v", e, err)
	}
}

func TestGroundTruthPut(t *testing.T) {
	g := GroundTruth{Dir: filepath.Join(t.TempDir(), "new", "gt")}
	for _, tc := range []struct {
		data, want string
	}{{"one", putNew}, {"one", putUnchanged}, {"two", PutChanged}} {
		got, err := g.Put("a_1gpu.png", []byte(tc.data))
		if err != nil || got != tc.want {
			t.Errorf("Put(%q) = %q, %v; want %q", tc.data, got, err, tc.want)
		}
	}
	b, err := os.ReadFile(g.Path("a_1gpu.png"))
	if err != nil || string(b) != "two" {
		t.Errorf("content %q, %v", b, err)
	}
	st, _ := os.Stat(g.Path("a_1gpu.png"))
	if st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
	left, _ := filepath.Glob(filepath.Join(g.Dir, ".*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// Rule: ground truth is looked for under the consistency platform's subfolder before the
// store itself, under the case's alias, and an incomplete set of key frames is passed over;
// an Ascend case ("npu" in its id) has no platform subfolder. Source: SGLang test_utils.py @
// a7ec6b97f786: get_consistency_gt_candidate_sets, CONSISTENCY_GT_CASE_ALIASES,
// get_consistency_gt_case_id, gt_exists, load_consistency_gt, get_consistency_platform.
func TestGroundTruthPlatformAndAliasRule(t *testing.T) {
	const source = "test_utils.py @ a7ec6b97f786 (get_consistency_gt_candidate_sets, gt_exists, CONSISTENCY_GT_CASE_ALIASES)"
	for _, tt := range []struct {
		name     string
		files    []string
		platform string
		id       string
		video    bool
		gpus     int    // 0: 1
		want     string // the file found (the first key frame for key frames), "" for not found
	}{
		{"platform folder first", []string{"5090/img_1gpu.png", "img_1gpu.png"}, "5090", "img", false, 0, "5090/img_1gpu.png"},
		{"store when the platform folder lacks it", []string{"img_1gpu.png"}, "5090", "img", false, 0, "img_1gpu.png"},
		{"another platform's folder is not ours", []string{"b200/img_1gpu.png"}, "5090", "img", false, 0, ""},
		{"every extension of the platform folder before the store", []string{"5090/img_1gpu.webp", "img_1gpu.jpg"}, "5090", "img", false, 0, "5090/img_1gpu.webp"},
		{"no platform: the store only", []string{"h100/img_1gpu.png"}, "", "img", false, 0, ""},
		{"alias", []string{"zimage_image_t2i_2_gpus_2gpu.png"}, "h100", "fsdp-inference", false, 2, "zimage_image_t2i_2_gpus_2gpu.png"},
		{"alias under the platform", []string{"h100/zimage_image_t2i_2_gpus_2gpu.png"}, "h100", "fsdp-inference", false, 2, "h100/zimage_image_t2i_2_gpus_2gpu.png"},
		{"no file under the case's own id for an alias", []string{"fsdp-inference_2gpu.png"}, "h100", "fsdp-inference", false, 2, ""},
		{"Ascend case: no platform folder", []string{"h100/x_npu_1gpu.png"}, "h100", "x_npu", false, 0, ""},
		{"incomplete platform key frames pass to the store",
			[]string{"5090/v_1gpu_frame_0.png", "v_1gpu_frame_0.png", "v_1gpu_frame_mid.png", "v_1gpu_frame_last.png"},
			"5090", "v", true, 0, "v_1gpu_frame_0.png"},
		{"complete platform key frames",
			[]string{"5090/v_1gpu_frame_0.png", "5090/v_1gpu_frame_mid.png", "5090/v_1gpu_frame_last.png"},
			"5090", "v", true, 0, "5090/v_1gpu_frame_0.png"},
		{"key frames incomplete everywhere", []string{"v_1gpu_frame_0.png", "v_1gpu_frame_mid.png"}, "5090", "v", true, 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tt.files {
				p := filepath.Join(dir, filepath.FromSlash(f))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			e, err := GroundTruth{Dir: dir, Platform: tt.platform}.Lookup(tt.id, max(tt.gpus, 1), tt.video, "png")
			var nf *NotFoundError
			got := ""
			switch {
			case errors.As(err, &nf):
			case err != nil:
				t.Fatalf("%s: %v", source, err)
			case e.Kind == GTKeyFrames:
				got = e.KeyFrames[0]
			default:
				got = e.Path
			}
			if tt.want != "" {
				tt.want = filepath.Join(dir, filepath.FromSlash(tt.want))
			}
			if got != tt.want {
				t.Errorf("%s: found %q, want %q (err %v)", source, got, tt.want, err)
			}
		})
	}
}

// Rule: the consistency platform is 5090 for an sm120 GPU, b200 for a Blackwell one, h100 for
// everything else; names are normalized (case, "_", "-"). Source: SGLang test_utils.py @
// a7ec6b97f786: get_consistency_platform, _normalize_consistency_platform,
// CONSISTENCY_PLATFORM_ALIASES; platforms/interface.py is_blackwell (major 10), is_sm120 (major 12).
func TestConsistencyPlatformRule(t *testing.T) {
	for gpu, want := range map[string]string{
		"h100": "h100", "h200": "h100", "H100": "h100", "sm90": "h100", "hopper": "h100", "a100": "h100", "": "h100", "mi300x": "h100", "gfx1250": "h100",
		"b200": "b200", "B-200": "b200", "gb200": "b200", "b300": "b200", "sm100": "b200", "blackwell": "b200",
		"5090": "5090", "rtx_5090": "5090", "rtx_pro_6000": "5090", "sm120": "5090",
	} {
		if got := consistencyPlatform(gpu); got != want {
			t.Errorf("consistencyPlatform(%q) = %q, want %q (get_consistency_platform, test_utils.py @ a7ec6b97f786)", gpu, got, want)
		}
	}
}

// TestGroundTruthLookupAudio: the audio ground truth is SGLang's {id}_{n}gpu_audio.wav
// (_audio_consistency_gt_filenames, test_utils.py), found on its own, whatever holds the
// pictures (a whole video, key frames or nothing).
func TestGroundTruthLookupAudio(t *testing.T) {
	if got := AudioName("ltx2_ti2v", 2); got != "ltx2_ti2v_2gpu_audio.wav" {
		t.Errorf("AudioName = %q", got)
	}
	dir := t.TempDir()
	g := GroundTruth{Dir: dir}
	_, err := g.LookupAudio("av", 1)
	var nf *NotFoundError
	if !errors.As(err, &nf) || err.Error() != "no ground truth at "+filepath.Join(dir, "av_1gpu_audio.wav") {
		t.Errorf("missing: %v", err)
	}
	for _, n := range []string{"av_1gpu_frame_0.png", "av_1gpu_frame_mid.png", "av_1gpu_frame_last.png", "av_1gpu_audio.wav"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if e, err := g.LookupAudio("av", 1); err != nil || e.Path != filepath.Join(dir, "av_1gpu_audio.wav") || e.Name != "av_1gpu_audio.wav" {
		t.Errorf("beside key frames: %+v, %v", e, err)
	}
	if err := os.Mkdir(filepath.Join(dir, "dir_1gpu_audio.wav"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := g.LookupAudio("dir", 1); err == nil || errors.As(err, &nf) {
		t.Errorf("a folder of that name: %v, want an error other than not found", err)
	}
}
