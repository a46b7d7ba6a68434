package refserver

import (
	"bytes"
	"encoding/json"
	"image/jpeg"
	"net/http"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/internal/media/mediatest"
)

func TestHealthAndModels(t *testing.T) {
	ts := start(t, Config{Model: "org/model-x"})
	if st, b := ts.call(t, http.MethodGet, "/health", "", nil); st != http.StatusOK {
		t.Errorf("GET /health: %d %s", st, b)
	}
	st, b := ts.call(t, http.MethodGet, "/v1/models", "", nil)
	var got struct {
		Object string `json:"object"`
		Data   []struct {
			ID       string `json:"id"`
			Object   string `json:"object"`
			NumGPUs  int    `json:"num_gpus"`
			TaskType string `json:"task_type"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &got); err != nil || st != http.StatusOK {
		t.Fatalf("GET /v1/models: %d %v %s", st, err, b)
	}
	if got.Object != "list" || len(got.Data) != 1 || got.Data[0].ID != "org/model-x" || got.Data[0].Object != "model" ||
		got.Data[0].NumGPUs != 1 || got.Data[0].TaskType != "T2I" {
		t.Errorf("GET /v1/models = %s", b)
	}
	st, b = ts.call(t, http.MethodGet, "/v1/nothing", "", nil)
	if st != http.StatusNotFound || string(b) != `{"detail":"Not Found"}` {
		t.Errorf("GET /v1/nothing: %d %s", st, b)
	}
}

func TestImageGeneration(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	ts := start(t, Config{})
	body := map[string]any{"prompt": "a red fox", "model": "m", "n": 1, "size": "96x64", "response_format": "b64_json",
		"seed": 42, "num_inference_steps": 4, "guidance_scale": 4.5, "negative_prompt": "blurry",
		"enable_teacache": true, "some_extra": map[string]any{"nested": []int{1}}}
	formats := map[string]string{"": "png", "png": "png", "jpeg": "mjpeg", "jpg": "mjpeg"}
	if media.OnPath().HasEncoder("libwebp") {
		formats["webp"] = "webp"
	}
	for format, codec := range formats {
		t.Run("format="+format, func(t *testing.T) {
			body := clone(body)
			if format != "" {
				body["output_format"] = format
			}
			r := ts.image(t, body)
			if !uuid4.MatchString(r.ID) || r.Created == 0 || r.PeakMemoryMB < loadReservedMiB || r.InferenceTimeS <= 0 || len(r.media) != 1 {
				t.Fatalf("reply %+v", r)
			}
			info, err := probeBytes(t, "out."+format, r.media[0])
			if err != nil {
				t.Fatal(err)
			}
			if info.Codec != codec || info.Width != 96 || info.Height != 64 || info.Frames != 1 {
				t.Errorf("got %+v, want a 96x64 %s", info, codec)
			}
		})
	}
	t.Run("n=3", func(t *testing.T) {
		body := clone(body)
		body["n"] = 3
		r := ts.image(t, body)
		if len(r.media) != 3 || bytes.Equal(r.media[0], r.media[1]) || bytes.Equal(r.media[1], r.media[2]) {
			t.Errorf("want 3 different images, got %d", len(r.media))
		}
	})
	t.Run("jpeg decodes", func(t *testing.T) {
		body := clone(body)
		body["output_format"] = "jpeg"
		if _, err := jpeg.Decode(bytes.NewReader(ts.image(t, body).media[0])); err != nil {
			t.Error(err)
		}
	})
}

func clone(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func TestImageDeterminism(t *testing.T) {
	ts := start(t, Config{})
	base := map[string]any{"prompt": "a lighthouse at night", "size": "128x96", "seed": 7, "num_inference_steps": 3}
	first := ts.image(t, base).media[0]
	if again := ts.image(t, base).media[0]; !bytes.Equal(first, again) {
		t.Fatal("the same request gave different PNG bytes")
	}
	img, w, h := rgbOf(decodePNG(t, first))
	if sd := stddev(img); sd < 20 {
		t.Errorf("output is nearly flat (stddev %.1f)", sd)
	}
	for name, change := range map[string]map[string]any{
		"seed":     {"seed": 8},
		"prompt":   {"prompt": "a lighthouse at dawn"},
		"steps":    {"num_inference_steps": 30},
		"negative": {"negative_prompt": "fog"},
	} {
		t.Run(name, func(t *testing.T) {
			body := clone(base)
			for k, v := range change {
				body[k] = v
			}
			other := ts.image(t, body).media[0]
			if bytes.Equal(first, other) {
				t.Fatalf("changing %s did not change the output", name)
			}
			o, _, _ := rgbOf(decodePNG(t, other))
			s := ssim(img, o, w, h)
			t.Logf("SSIM vs base: %.3f", s)
			if name == "steps" && s < 0.5 {
				t.Errorf("more steps should refine, not replace, the image: SSIM %.3f", s)
			}
		})
	}
}

func TestImageBadRequests(t *testing.T) {
	ts := start(t, Config{})
	for _, tc := range []struct {
		name, body, want string
	}{
		{"not json", `{"prompt": `, "request body: want a JSON object"},
		{"array", `[1]`, "request body: want a JSON object"},
		{"bad size", `{"prompt": "x", "size": "big"}`, `size "big": want WIDTHxHEIGHT`},
		{"tiny size", `{"prompt": "x", "size": "4x4"}`, "must be between 8 and 4096"},
		{"huge size", `{"prompt": "x", "size": "5000x64"}`, "must be between 8 and 4096"},
		{"format", `{"prompt": "x", "output_format": "gif"}`, `output_format "gif": want png, jpeg or webp`},
		{"url", `{"prompt": "x", "response_format": "url"}`, "b64_json only"},
		{"steps range", `{"prompt": "x", "num_inference_steps": 0}`, "num_inference_steps: 0 is out of range [1, 1000]"},
		{"n", `{"prompt": "x", "n": 9}`, "n: 9 is out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, b := ts.call(t, http.MethodPost, "/v1/images/generations", "application/json", strings.NewReader(tc.body))
			var e struct{ Detail string }
			if err := json.Unmarshal(b, &e); err != nil || st != http.StatusBadRequest || !strings.Contains(e.Detail, tc.want) {
				t.Errorf("status %d, body %s; want 400 with %q", st, b, tc.want)
			}
		})
	}
	// Type errors are FastAPI's 422, pydantic's list of every wrong field.
	for _, tc := range []struct {
		name, body, want string
	}{
		{"no prompt", `{"size": "64x64"}`, `[{"type":"missing","loc":["body","prompt"],"msg":"Field required","input":{"size":"64x64"}}]`},
		{"seed type", `{"prompt": "x", "seed": "abc"}`,
			`[{"type":"int_parsing","loc":["body","seed"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"abc"}]`},
		{"two problems", `{"prompt": 3, "n": 1.5}`, `[{"type":"string_type","loc":["body","prompt"],"msg":"Input should be a valid string","input":3},` +
			`{"type":"int_from_float","loc":["body","n"],"msg":"Input should be a valid integer, got a number with a fractional part","input":1.5}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, b := ts.call(t, http.MethodPost, "/v1/images/generations", "application/json", strings.NewReader(tc.body))
			if want := `{"detail":` + tc.want + "}"; st != http.StatusUnprocessableEntity || string(b) != want {
				t.Errorf("status %d, body %s; want 422 %s", st, b, want)
			}
		})
	}
	// Rejected requests count too: fault request numbers count every request received.
	r := ts.image(t, map[string]any{"prompt": "x", "size": "16x16"})
	if !strings.Contains(ts.log.String(), "["+r.ID+" #13]") {
		t.Errorf("log does not number %s as request 13:\n%s", r.ID, ts.log)
	}
}

func TestImageEdits(t *testing.T) {
	ts := start(t, Config{})
	in1 := must(media.EncodePNG(testPicture(80, 60, 0)))
	in2 := must(media.EncodePNG(testPicture(40, 40, 1)))
	edit := func(t *testing.T, fields map[string]string, files ...multipartFile) (int, []byte) {
		ct, body := multipartBody(t, fields, files...)
		return ts.call(t, http.MethodPost, "/v1/images/edits", ct, body)
	}
	editOK := func(t *testing.T, fields map[string]string, files ...multipartFile) imageReply {
		st, b := edit(t, fields, files...)
		return decodeImageReply(t, st, b)
	}
	fields := map[string]string{"prompt": "make it autumn", "seed": "3", "num_inference_steps": "2", "response_format": "b64_json", "n": "1"}

	r := editOK(t, fields, multipartFile{"image", "a.png", in1})
	img := decodePNG(t, r.media[0])
	if b := img.Bounds(); b.Dx() != 80 || b.Dy() != 60 {
		t.Errorf("edit without size: %v, want the input's 80x60", b)
	}
	again := editOK(t, fields, multipartFile{"image", "a.png", in1})
	if !bytes.Equal(r.media[0], again.media[0]) {
		t.Error("the same edit gave different bytes")
	}
	// The output follows the input image.
	out, w, h := rgbOf(img)
	src, _, _ := rgbOf(decodePNG(t, in1))
	if s := ssim(out, src, w, h); s < 0.2 {
		t.Errorf("edit output does not resemble its input: SSIM %.3f", s)
	}

	sized := map[string]string{"prompt": "x", "size": "32x48", "output_format": "jpeg"}
	r = editOK(t, sized, multipartFile{"image[]", "a.png", in1}, multipartFile{"image[]", "b.png", in2})
	info, err := probeBytes(t, "e.jpg", r.media[0])
	if err != nil || info.Width != 32 || info.Height != 48 || info.Codec != "mjpeg" {
		t.Errorf("sized edit: %+v, %v", info, err)
	}
	other := editOK(t, fields, multipartFile{"image", "b.png", in2})
	if bytes.Equal(other.media[0], again.media[0]) {
		t.Error("a different input image gave the same output")
	}

	for _, tc := range []struct {
		name  string
		files []multipartFile
		want  string

		status int
	}{
		{"no image", nil, "Field 'image' or 'url' is required", http.StatusUnprocessableEntity},
		{"not an image", []multipartFile{{"image", "x.png", []byte("hello")}}, "image[0]: cannot decode the image", http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, b := edit(t, fields, tc.files...)
			if st != tc.status || !strings.Contains(string(b), tc.want) {
				t.Errorf("status %d, body %s; want %d with %q", st, b, tc.status, tc.want)
			}
		})
	}
	st, b := ts.postJSON(t, "/v1/images/edits", map[string]any{"prompt": "x"})
	if st != http.StatusUnprocessableEntity || !strings.Contains(string(b), "Field 'image' or 'url' is required") {
		t.Errorf("JSON edit: %d %s", st, b)
	}
}
