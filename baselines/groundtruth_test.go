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

	// Incomplete key frames are an error naming the missing ones.
	touch("vid_1gpu_frame_0.png", "vid_1gpu_frame_last.png")
	_, err = g.Lookup("vid", 1, true, "")
	if err == nil || errors.As(err, &nf) || !strings.Contains(err.Error(), "key frames vid_1gpu_frame_mid.png missing") {
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
	}{{"one", PutNew}, {"one", PutUnchanged}, {"two", PutChanged}} {
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
	if p, err := g.LookupAudio("av", 1); err != nil || p != filepath.Join(dir, "av_1gpu_audio.wav") {
		t.Errorf("beside key frames: %q, %v", p, err)
	}
	if err := os.Mkdir(filepath.Join(dir, "dir_1gpu_audio.wav"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := g.LookupAudio("dir", 1); err == nil || errors.As(err, &nf) {
		t.Errorf("a folder of that name: %v, want an error other than not found", err)
	}
}
