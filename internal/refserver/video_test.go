package refserver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/internal/media/mediatest"
)

func TestVideoLifecycle(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	ts := start(t, Config{StepMs: 5})
	st, b := ts.postJSON(t, "/v1/videos", map[string]any{"prompt": "waves", "size": "64x48", "seed": 1,
		"num_inference_steps": 10, "fps": 8, "num_frames": 12, "enable_teacache": true})
	j := decodeJob(t, st, b)
	if !uuid4.MatchString(j.ID) || j.Object != "video" || j.Status != "queued" || j.Progress != 0 || j.CreatedAt == 0 ||
		j.Size != "64x48" || j.Seconds != "2" {
		t.Fatalf("created job %s", b)
	}
	// 10 steps of 5 ms: the job is still running when we look.
	st, b = ts.call(t, http.MethodGet, "/v1/videos/"+j.ID+"/content", "", nil)
	if st != http.StatusNotFound || string(b) != `{"detail":"Generation is still in-progress"}` {
		t.Errorf("content while running: %d %s", st, b)
	}
	seen := map[string]bool{}
	deadline := time.Now().Add(30 * time.Second)
	for j.Status != "completed" && time.Now().Before(deadline) {
		st, b := ts.call(t, http.MethodGet, "/v1/videos/"+j.ID, "", nil)
		j = decodeJob(t, st, b)
		seen[j.Status] = true
		if (j.Status == "queued") != (j.Progress == 0) {
			t.Errorf("job %s at progress %d: SGLang shows 0 while queued, 100 once completed", j.Status, j.Progress)
		}
		time.Sleep(2 * time.Millisecond)
	}
	if !seen["queued"] || seen["in_progress"] || j.Status != "completed" || j.Progress != 100 || j.PeakMemoryMB == nil || j.InferenceTimeS == nil ||
		*j.InferenceTimeS <= 0.05 {
		t.Fatalf("job ended %+v after statuses %v", j, seen)
	}
	// The record is written before the job turns completed, as SGLang's GPU worker writes it
	// before the result reaches the HTTP server.
	if recs := perfRecords(t, ts.dir); len(recs) != 1 || recs[0].RequestID != j.ID {
		t.Errorf("perf records when the job completed: %+v, want the job's", recs)
	}
	resp, err := ts.Client().Get(ts.URL + "/v1/videos/" + j.ID + "/content")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "video/mp4" {
		t.Errorf("content: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	st, b = ts.call(t, http.MethodGet, "/v1/videos", "", nil)
	var list struct {
		Object string     `json:"object"`
		Data   []jobReply `json:"data"`
	}
	if err := json.Unmarshal(b, &list); err != nil || st != http.StatusOK || list.Object != "list" || len(list.Data) != 1 || list.Data[0].ID != j.ID {
		t.Errorf("GET /v1/videos: %d %s", st, b)
	}
	st, b = ts.call(t, http.MethodDelete, "/v1/videos/"+j.ID, "", nil)
	if d := decodeJob(t, st, b); d.ID != j.ID || d.Status != "deleted" {
		t.Errorf("DELETE: %d %s, want the job as deleted", st, b)
	}
	for _, path := range []string{"/v1/videos/nope", "/v1/videos/nope/content", "/v1/videos/" + j.ID} {
		if st, b := ts.call(t, http.MethodGet, path, "", nil); st != http.StatusNotFound || string(b) != `{"detail":"Video not found"}` {
			t.Errorf("GET %s: %d %s", path, st, b)
		}
	}
}

func TestVideoShapeAndAudio(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	ts := start(t, Config{})
	for _, tc := range []struct {
		name      string
		body      map[string]any
		w, h, n   int
		fps       float64
		wantAudio bool
	}{
		{"defaults", map[string]any{"prompt": "p"}, 256, 256, 16, 8, false},
		{"seconds x fps", map[string]any{"prompt": "p", "size": "64x32", "seconds": "2", "fps": 10}, 64, 32, 20, 10, false},
		{"num_frames wins", map[string]any{"prompt": "p", "size": "64x32", "seconds": 4, "num_frames": 5}, 64, 32, 5, 8, false},
		{"generate_audio", map[string]any{"prompt": "p", "size": "64x32", "num_frames": 8, "generate_audio": true}, 64, 32, 8, 8, true},
		{"audio", map[string]any{"prompt": "p", "size": "64x32", "num_frames": 8, "audio": "true"}, 64, 32, 8, 8, true},
		{"task t2va", map[string]any{"prompt": "p", "size": "64x32", "num_frames": 8, "task": "t2va"}, 64, 32, 8, 8, true},
		{"explicit false wins", map[string]any{"prompt": "p", "size": "64x32", "num_frames": 8, "task": "ref2va", "generate_audio": false}, 64, 32, 8, 8, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, mp4 := ts.video(t, tc.body)
			info, err := probeBytes(t, "v.mp4", mp4)
			if err != nil {
				t.Fatal(err)
			}
			if info.Codec != "h264" || info.Width != tc.w || info.Height != tc.h || info.Frames != tc.n || info.FPS != tc.fps {
				t.Errorf("got %+v, want h264 %dx%d %d frames at %g fps", info, tc.w, tc.h, tc.n, tc.fps)
			}
			if got := info.Audio != nil; got != tc.wantAudio {
				t.Fatalf("audio %+v, want audio=%t", info.Audio, tc.wantAudio)
			}
			if info.Audio != nil {
				want := float64(tc.n) / tc.fps
				if a := info.Audio; a.Codec != "aac" || a.DurationS < want-0.01 || a.DurationS > want+0.05 {
					t.Errorf("audio %+v, want aac of %.2fs", a, want)
				}
			}
		})
	}
}

func TestVideoBadRequests(t *testing.T) {
	ts := start(t, Config{})
	// A JSON body is validated by create_video itself: a pydantic error is a 400 "Invalid
	// request body: ..." (video_api.py), not FastAPI's 422.
	for _, tc := range []struct {
		name string
		body map[string]any
		want string
	}{
		{"odd size", map[string]any{"prompt": "p", "size": "63x48"}, "even width and height"},
		{"no prompt", map[string]any{"size": "64x48"},
			"Invalid request body: 1 validation error for VideoGenerationsRequest\nprompt\n  Field required [type=missing"},
		{"frames", map[string]any{"prompt": "p", "num_frames": 0}, "num_frames: 0 is out of range"},
		{"seconds", map[string]any{"prompt": "p", "seconds": -1}, "seconds: -1 is out of range"},
		{"fractional seconds", map[string]any{"prompt": "p", "seconds": 2.5},
			"seconds\n  Input should be a valid integer, got a number with a fractional part [type=int_from_float, input_value=2.5, input_type=float]"},
		{"audio", map[string]any{"prompt": "p", "generate_audio": "maybe"}, "generate_audio\n  Input should be a valid boolean"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, b := ts.postJSON(t, "/v1/videos", tc.body)
			var body struct{ Detail string }
			if err := json.Unmarshal(b, &body); err != nil || st != http.StatusBadRequest || !strings.Contains(body.Detail, tc.want) {
				t.Errorf("status %d, body %s; want 400 with %q", st, b, tc.want)
			}
		})
	}
	// A form is validated by FastAPI (seconds: Optional[int] = Form(None)): 422 with pydantic's list.
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("prompt", "p")
	_ = mw.WriteField("seconds", "2.5")
	_ = mw.Close()
	st, b := ts.call(t, http.MethodPost, "/v1/videos", mw.FormDataContentType(), &buf)
	want := `{"detail":[{"type":"int_parsing","loc":["body","seconds"],"msg":"Input should be a valid integer, ` +
		`unable to parse string as an integer","input":"2.5"}]}`
	if st != http.StatusUnprocessableEntity || string(b) != want {
		t.Errorf("form seconds=2.5: %d %s, want 422 %s", st, b, want)
	}
}

func TestVideoDeterminism(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	ts := start(t, Config{})
	body := map[string]any{"prompt": "a kite over hills", "size": "64x48", "seed": 5, "num_frames": 8, "num_inference_steps": 2, "generate_audio": true}
	_, a := ts.video(t, body)
	_, b := ts.video(t, body)
	if !bytes.Equal(a, b) {
		t.Error("the same video request gave different MP4 bytes")
	}
	fa := frames(t, a, 64, 48)
	if len(fa) != 8 {
		t.Fatalf("%d frames, want 8", len(fa))
	}
	// Frames move smoothly: neighbours are alike, the clip is not frozen.
	if s := ssim(fa[0], fa[1], 64, 48); s < 0.8 || bytes.Equal(fa[0], fa[1]) {
		t.Errorf("SSIM of frames 0 and 1 = %.3f, want similar but not equal", s)
	}
	if bytes.Equal(fa[0], fa[7]) {
		t.Error("the video does not move")
	}
	body["seed"] = 6
	_, c := ts.video(t, body)
	if s := ssim(fa[0], frames(t, c, 64, 48)[0], 64, 48); s > 0.9 {
		t.Errorf("another seed gave a similar video: SSIM %.3f", s)
	}
}

func TestVideoInputReference(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	ts := start(t, Config{})
	ref := must(media.EncodePNG(testPicture(64, 48, 0)))
	ct, body := multipartBody(t, map[string]string{"prompt": "animate it", "size": "64x48", "num_frames": "4", "seed": "1"},
		multipartFile{"input_reference", "ref.png", ref})
	st, b := ts.call(t, http.MethodPost, "/v1/videos", ct, body)
	j := decodeJob(t, st, b)
	if j = ts.wait(t, j.ID, 30*time.Second); j.Status != "completed" {
		t.Fatalf("job %+v", j)
	}
	_, mp4 := ts.call(t, http.MethodGet, "/v1/videos/"+j.ID+"/content", "", nil)
	withFile := frames(t, mp4, 64, 48)[0]
	src, _, _ := rgbOf(testPicture(64, 48, 0))
	if s := ssim(withFile, src, 64, 48); s < 0.2 {
		t.Errorf("first frame does not resemble the input reference: SSIM %.3f", s)
	}
	// The same image as a data URI in JSON gives the same video.
	_, mp4b := ts.video(t, map[string]any{"prompt": "animate it", "size": "64x48", "num_frames": 4, "seed": 1,
		"input_reference": "data:image/png;base64," + base64.StdEncoding.EncodeToString(ref)})
	if !bytes.Equal(mp4, mp4b) {
		t.Error("input_reference as a file and as a data URI gave different videos")
	}
	_, plain := ts.video(t, map[string]any{"prompt": "animate it", "size": "64x48", "num_frames": 4, "seed": 1})
	if bytes.Equal(plain, mp4) {
		t.Error("the input reference did not change the video")
	}
}
