package refserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/diffusion-check/diffusion-check/internal/media/mediatest"
	"github.com/google/go-cmp/cmp"
)

const minimaxID = "MiniMaxAI/MiniMax-H3"

// t2va is the request of SGLang's minimax_h3_t2va_2gpu_h100 case (test/server/gpu_cases.py),
// fewer steps.
func t2va() map[string]any {
	return map[string]any{
		"prompt": "A static night view of a narrow London alley in soft rain", "size": "1344x768", "seconds": 4,
		"task": "t2va", "conditions": []any{},
		"target":              map[string]any{"short_edge": 768, "aspect_ratio": "16:9", "duration_seconds": 4.0},
		"num_inference_steps": 2, "flow_shift": 12.0, "audio_flow_shift": 3.0, "seed": 42,
	}
}

func with(body map[string]any, kv ...any) map[string]any {
	b := clone(body)
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(b, kv[i].(string))
		} else {
			b[kv[i].(string)] = kv[i+1]
		}
	}
	return b
}

// TestMiniMaxRejectsAsSGLang sends requests SGLang's MiniMax-H3 adapter refuses and compares
// the answer with SGLang's: status 400 and its message (video_adapter.py,
// request_validation.py, material_io.py), or Starlette's bare 500 for an unreadable material.
func TestMiniMaxRejectsAsSGLang(t *testing.T) {
	ts := start(t, Config{Model: minimaxID})
	empty := filepath.Join(t.TempDir(), "empty.png")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ref := func(uri string) []any { return []any{map[string]any{"type": "image", "uri": uri, "role": "reference"}} }
	target := func(kv ...any) map[string]any {
		return with(map[string]any{"short_edge": 768, "aspect_ratio": "16:9", "duration_seconds": 4.0}, kv...)
	}
	for _, tc := range []struct {
		name   string
		body   map[string]any
		status int
		want   string
	}{
		{"no task", with(t2va(), "task", nil), 400, "task is required for MiniMax H3; supported tasks: fl2va, ref2va, t2va"},
		{"unknown task", with(t2va(), "task", "i2v"), 400, "unsupported MiniMax H3 task 'i2v'; supported tasks: fl2va, ref2va, t2va"},
		{"num_frames", with(t2va(), "num_frames", 96), 400, "num_frames is not supported: MiniMax H3 derives the temporal shape from target.duration_seconds"},
		{"fps", with(t2va(), "fps", 24), 400, "fps is not supported: MiniMax H3 derives the temporal shape from target.duration_seconds"},
		{"guidance_scale", with(t2va(), "guidance_scale", 5.0), 400,
			"guidance_scale is not supported: MiniMax H3 serves only the CFG-distilled single-positive-branch checkpoint"},
		{"negative_prompt", with(t2va(), "negative_prompt", "blurry"), 400,
			"negative_prompt is not supported: MiniMax H3 serves only the CFG-distilled single-positive-branch checkpoint"},
		{"no target", with(t2va(), "target", nil), 400, "target is required and must be an object"},
		{"short edge", with(t2va(), "target", target("short_edge", 0)), 400, "target.short_edge must be positive, got 0"},
		{"ratio", with(t2va(), "target", target("aspect_ratio", "7:4")), 400,
			"target.aspect_ratio for task 't2va' must be 'auto' or one of ['21:9', '16:9', '4:3', '1:1', '3:4', '9:16'], got '7:4'"},
		{"no duration", with(t2va(), "target", target("duration_seconds", nil)), 400, "target.duration_seconds is required"},
		{"short", with(t2va(), "target", target("duration_seconds", 3)), 400, "target.duration_seconds must be in [4, 15], got 3"},
		{"long", with(t2va(), "target", target("duration_seconds", 16.5)), 400, "target.duration_seconds must be in [4, 15], got 16.5"},
		{"t2va conditions", with(t2va(), "conditions", ref(empty)), 400, "conditions must be empty for task 't2va' (got 1 entries)"},
		{"ref2va without conditions", with(t2va(), "task", "ref2va"), 400, "conditions requires at least one entry for task 'ref2va'"},
		{"ref2va keyframe", with(t2va(), "task", "ref2va", "conditions", []any{map[string]any{"type": "image", "uri": empty, "role": "keyframe"}}), 400,
			"conditions[0]: task 'ref2va' does not allow condition role='keyframe' type='image'"},
		{"no uri", with(t2va(), "task", "ref2va", "conditions", []any{map[string]any{"type": "image", "role": "reference"}}), 400,
			"conditions[0].uri must be a non-empty string"},
		{"empty material", with(t2va(), "task", "ref2va", "conditions", ref(empty)), 400, "MiniMax H3 material source is empty: " + empty},
		{"missing material", with(t2va(), "task", "ref2va", "conditions", ref("/nonexistent/ref.png")), 500, ""},
		{"fl2va middle frame", with(t2va(), "task", "fl2va", "conditions",
			[]any{map[string]any{"type": "image", "uri": empty, "role": "keyframe", "frame_index": 3}}), 400,
			"conditions for task 'fl2va' must be one or two ordered image/keyframe entries with frame_index [0], [-1], or [0, -1], got [3]"},
		{"fl2va index range", with(t2va(), "task", "fl2va", "conditions",
			[]any{map[string]any{"type": "image", "uri": empty, "role": "keyframe", "frame_index": 107}}), 400,
			"conditions[0].frame_index must be -1 or in [0, 107) after 17n+5 frame alignment, got 107"},
		{"fractional seconds", with(t2va(), "seconds", 2.5), 400,
			"Invalid request body: 1 validation error for VideoGenerationsRequest\nseconds\n" +
				"  Input should be a valid integer, got a number with a fractional part [type=int_from_float, input_value=2.5, input_type=float]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, b := ts.postJSON(t, "/v1/videos", tc.body)
			if tc.status == 500 {
				if st != 500 || string(b) != "Internal Server Error" {
					t.Errorf("status %d, body %s; want Starlette's 500 Internal Server Error", st, b)
				}
				return
			}
			var got struct{ Detail string }
			if err := json.Unmarshal(b, &got); err != nil || st != tc.status || got.Detail != tc.want {
				t.Errorf("status %d, body %s\nwant %d %q", st, b, tc.status, tc.want)
			}
		})
	}
}

// TestMiniMaxShapeFromTarget proves that the canvas and the frame count come from
// extra.target as SGLang resolves them (16:9 at 768 → 1344x768; 4 s × 24 fps = 96 → 107, the
// next 17n+5), size and seconds ignored, audio always made, and the job's size and seconds
// those of project_queued_job_fields.
func TestMiniMaxShapeFromTarget(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	ts := start(t, Config{Model: minimaxID, StepMs: 0.1})
	j, mp4 := ts.video(t, with(t2va(), "size", "64x64", "seconds", 8))
	if j.Size != "1344x768" || j.Seconds != "4.458333" {
		t.Errorf("job size %s seconds %s, want 1344x768 and 4.458333 (107/24)", j.Size, j.Seconds)
	}
	info, err := probeBytes(t, "v.mp4", mp4)
	if err != nil {
		t.Fatal(err)
	}
	if info.Width != 1344 || info.Height != 768 || info.Frames != 107 || info.FPS != 24 || info.Audio == nil {
		t.Errorf("got %+v, want 1344x768, 107 frames at 24 fps with audio", info)
	}
}

func TestMiniMaxCanvasAndFrames(t *testing.T) {
	for _, tc := range []struct {
		ratio string
		w, h  int
	}{{"16:9", 1344, 768}, {"9:16", 768, 1344}, {"1:1", 768, 768}, {"4:3", 1024, 768}, {"21:9", 1536, 672}, {"auto", 1344, 768}} {
		w, h, _, _, err := minimaxTarget(
			map[string]any{"short_edge": json.Number("768"), "aspect_ratio": tc.ratio, "duration_seconds": json.Number("4")}, "t2va",
			minimaxTasks["t2va"])
		if err != nil || w != tc.w || h != tc.h {
			t.Errorf("%s: %dx%d %v, want %dx%d", tc.ratio, w, h, err, tc.w, tc.h)
		}
	}
	// Another short edge only warns in SGLang (#35664) and scales the same way: SGLang's
	// 5090 consumer-budget case asks 16:9 at 384, a 672x384 canvas.
	for _, tc := range []struct {
		se, w, h int
	}{{384, 672, 384}, {720, 1280, 704}, {1080, 1344, 768}} {
		w, h, _, base, err := minimaxTarget(
			map[string]any{"short_edge": json.Number(fmt.Sprint(tc.se)), "aspect_ratio": "16:9", "duration_seconds": json.Number("4")}, "t2va",
			minimaxTasks["t2va"])
		if err != nil || w != tc.w || h != tc.h || base != tc.se {
			t.Errorf("short edge %d: %dx%d (base %d) %v, want %dx%d", tc.se, w, h, base, err, tc.w, tc.h)
		}
	}
	got := []int{minimaxFrames(96), minimaxFrames(120), minimaxFrames(107), minimaxFrames(360), minimaxFrames(0)}
	if diff := cmp.Diff([]int{107, 124, 107, 362, 1}, got); diff != "" {
		t.Errorf("17n+5 alignment (-want +got):\n%s", diff)
	}
}

// TestMiniMaxRef2VAUploadIsNoCondition proves that ref2va reads its condition from its uri and
// that an input_reference upload changes nothing: SGLang's MiniMax-H3 takes conditions only.
func TestMiniMaxRef2VAUploadIsNoCondition(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	ts := start(t, Config{Model: minimaxID, StepMs: 0.1})
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 32, 32))); err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(t.TempDir(), "ref.png")
	if err := os.WriteFile(ref, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	body := with(t2va(), "task", "ref2va", "conditions", []any{map[string]any{"type": "image", "uri": ref, "role": "reference"}})
	_, plain := ts.video(t, body)
	_, withUpload := ts.video(t, with(body, "input_reference", "data:image/png;base64,iVBORw0KGgo="))
	if !bytes.Equal(plain, withUpload) {
		t.Error("an input_reference changed a MiniMax-H3 ref2va output; SGLang never makes it a condition")
	}
	if st, b := ts.postJSON(t, "/v1/videos", with(body, "conditions", []any{})); st != http.StatusBadRequest {
		t.Errorf("ref2va with an upload but no condition: %d %s, want 400", st, b)
	}
}

// TestMiniMaxOutputsAreRequests proves that n outputs are n requests "<id>:<i>", each with its
// perf record, as SGLang's expand_request_outputs splits them.
func TestMiniMaxOutputsAreRequests(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	ts := start(t, Config{Model: minimaxID, StepMs: 0.1})
	st, b := ts.postJSON(t, "/v1/videos", with(t2va(), "n", 2))
	j := ts.waitDone(t, decodeJob(t, st, b).ID)
	if j.Status != "completed" {
		t.Fatalf("job %+v", j)
	}
	var ids []string
	for _, r := range perfRecords(t, ts.dir) {
		ids = append(ids, r.RequestID)
	}
	if diff := cmp.Diff([]string{j.ID + ":0", j.ID + ":1"}, ids); diff != "" {
		t.Errorf("perf record ids (-want +got):\n%s", diff)
	}
	for _, v := range []string{"0", "1"} {
		if st, _ := ts.call(t, http.MethodGet, "/v1/videos/"+j.ID+"/content?variant="+v, "", nil); st != http.StatusOK {
			t.Errorf("variant %s: %d", v, st)
		}
	}
}

// TestNoPerfRecordWithoutStageLogging proves that, as SGLang, the server writes no record
// unless stage logging is on.
func TestNoPerfRecordWithoutStageLogging(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	dir := t.TempDir()
	h := warmHandler(Config{StepMs: 1, PerfLogDir: dir})
	ts := &testServer{Server: httptestServer(t, h), h: h, dir: dir}
	ts.image(t, small)
	if recs := perfRecords(t, dir); len(recs) != 0 {
		t.Errorf("%d perf records with stage logging off, want none", len(recs))
	}
}

// TestMiniMaxFormExtrasAreJSON proves that a multipart request (as the runner sends one with an
// input_reference) carries the MiniMax-H3 extras as JSON text that SGLang parses
// (_parse_extra_value), and that its fields are checked as in a JSON body.
func TestMiniMaxFormExtrasAreJSON(t *testing.T) {
	ts := start(t, Config{Model: minimaxID, StepMs: 0.1})
	form := func(extra map[string]string) (int, []byte) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		fields := map[string]string{"prompt": "p", "size": "1280x720", "seconds": "4", "task": "t2va", "conditions": "[]",
			"target": `{"short_edge": 768, "aspect_ratio": "16:9", "duration_seconds": 4.0}`, "num_inference_steps": "1"}
		for k, v := range extra {
			fields[k] = v
		}
		for k, v := range fields {
			if err := mw.WriteField(k, v); err != nil {
				t.Fatal(err)
			}
		}
		fw, err := mw.CreateFormFile("input_reference", "ref.png")
		if err != nil {
			t.Fatal(err)
		}
		if err := png.Encode(fw, image.NewRGBA(image.Rect(0, 0, 16, 16))); err != nil {
			t.Fatal(err)
		}
		if err := mw.Close(); err != nil {
			t.Fatal(err)
		}
		return ts.call(t, http.MethodPost, "/v1/videos", mw.FormDataContentType(), &buf)
	}
	if st, b := form(nil); st != http.StatusOK || !bytes.Contains(b, []byte(`"size":"1344x768"`)) {
		t.Errorf("form t2va: %d %s, want a 1344x768 job", st, b)
	}
	if st, b := form(map[string]string{"fps": "24"}); st != http.StatusBadRequest ||
		string(b) != `{"detail":"fps is not supported: MiniMax H3 derives the temporal shape from target.duration_seconds"}` {
		t.Errorf("form with fps: %d %s", st, b)
	}
	if st, b := form(map[string]string{"target": `{"short_edge": 768, "aspect_ratio": "16:9", "duration_seconds": 20}`}); st != http.StatusBadRequest ||
		string(b) != `{"detail":"target.duration_seconds must be in [4, 15], got 20"}` {
		t.Errorf("form with 20 s: %d %s", st, b)
	}
}
