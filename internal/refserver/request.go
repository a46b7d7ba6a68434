package refserver

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	_ "image/gif" // input images may be GIFs
	_ "image/jpeg"
	_ "image/png"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
)

// Request limits: generous for a test server, small enough that a typo cannot eat the machine.
const (
	maxBody    = 64 << 20
	maxSide    = 4096
	minSide    = 8
	maxFrames  = 1024
	maxSteps   = 1000
	maxImages  = 8
	maxFPS     = 120
	defaultFPS = 8
	// defaultFrames is the frame count of a video request without seconds or num_frames.
	defaultFrames = 16
	defaultSteps  = 20
	defaultSeed   = 42
)

type kind string

const (
	kindImage kind = "image"
	kindEdit  kind = "edit"
	kindVideo kind = "video"
)

// genRequest is one parsed generation request.
type genRequest struct {
	kind             kind
	prompt, negative string
	seed             int64
	w, h             int
	n                int    // images per request
	format           string // png, jpeg or webp (images)
	frames, fps      int    // 1 and 0 for images
	seconds          float64
	steps            int
	audio            bool
	inputs           []image.Image // edit images or the video's input_reference
	inputHash        []byte        // what the output depends on besides the fields above
}

func (g *genRequest) size() string { return fmt.Sprintf("%dx%d", g.w, g.h) }

// badRequest is a request the server rejects with 400; it lists every problem found.
type badRequest []string

func (b badRequest) Error() string { return strings.Join(b, "; ") }

// fields are the parameters of a request: decoded JSON values (json.Number for numbers) or,
// from a multipart form, strings. Accessors accept both, as real servers do.
type fields struct {
	m        map[string]any
	problems badRequest
}

func (f *fields) bad(format string, args ...any) {
	f.problems = append(f.problems, fmt.Sprintf(format, args...))
}

func (f *fields) has(name string) bool { v, ok := f.m[name]; return ok && v != nil }

func (f *fields) str(name, def string) string {
	if !f.has(name) {
		return def
	}
	if v, ok := f.m[name].(string); ok {
		return v
	}
	f.bad("%s: want a string, got %s", name, jsonType(f.m[name]))
	return def
}

func (f *fields) number(name string, def float64) float64 {
	if !f.has(name) {
		return def
	}
	var s string
	switch v := f.m[name].(type) {
	case json.Number:
		s = v.String()
	case string:
		s = strings.TrimSpace(v)
		if s == "" {
			return def
		}
	default:
		f.bad("%s: want a number, got %s", name, jsonType(v))
		return def
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || x-x != 0 {
		f.bad("%s: want a number, got %q", name, s)
		return def
	}
	return x
}

func (f *fields) integer(name string, def, lo, hi int64) int64 {
	if !f.has(name) {
		return def
	}
	var s string
	switch v := f.m[name].(type) {
	case json.Number:
		s = v.String()
	case string:
		s = strings.TrimSpace(v)
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < lo || n > hi {
			f.bad("%s: %d is out of range [%d, %d]", name, n, lo, hi)
			return def
		}
		return n
	}
	x := f.number(name, float64(def))
	if x != float64(int64(x)) {
		f.bad("%s: want an integer, got %v", name, x)
		return def
	}
	if n := int64(x); n < lo || n > hi {
		f.bad("%s: %d is out of range [%d, %d]", name, n, lo, hi)
		return def
	}
	return int64(x)
}

// boolean returns the field's value and whether it was set.
func (f *fields) boolean(name string) (value, set bool) {
	if !f.has(name) {
		return false, false
	}
	switch v := f.m[name].(type) {
	case bool:
		return v, true
	case string:
		if b, err := strconv.ParseBool(strings.TrimSpace(v)); err == nil {
			return b, true
		}
	case json.Number:
		if b, err := strconv.ParseBool(v.String()); err == nil {
			return b, true
		}
	}
	f.bad("%s: want true or false, got %v", name, f.m[name])
	return false, false
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// parseSize reads "WxH" (also "W*H", as some SGLang front ends write it).
func parseSize(s string) (w, h int, err error) {
	ws, hs, ok := strings.Cut(strings.ToLower(strings.TrimSpace(s)), "x")
	if !ok {
		ws, hs, ok = strings.Cut(s, "*")
	}
	w, err1 := strconv.Atoi(strings.TrimSpace(ws))
	h, err2 := strconv.Atoi(strings.TrimSpace(hs))
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("size %q: want WIDTHxHEIGHT, e.g. 512x512", s)
	}
	if w < minSide || h < minSide || w > maxSide || h > maxSide {
		return 0, 0, fmt.Errorf("size %q: width and height must be between %d and %d", s, minSide, maxSide)
	}
	return w, h, nil
}

// readFields reads a JSON object or a multipart form. Files of the form are returned by field
// name, in order.
func readFields(r *http.Request) (*fields, map[string][][]byte, error) {
	r.Body = http.MaxBytesReader(nil, r.Body, maxBody)
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == "multipart/form-data" {
		if err := r.ParseMultipartForm(maxBody); err != nil {
			return nil, nil, badRequest{"reading multipart form: " + err.Error()}
		}
		f := &fields{m: map[string]any{}}
		for k, v := range r.MultipartForm.Value {
			if len(v) > 0 {
				f.m[k] = v[0]
			}
		}
		files := map[string][][]byte{}
		for k, hs := range r.MultipartForm.File {
			for _, fh := range hs {
				b, err := readPart(fh)
				if err != nil {
					return nil, nil, badRequest{fmt.Sprintf("%s: %v", k, err)}
				}
				files[k] = append(files[k], b)
			}
		}
		return f, files, nil
	}
	dec := json.NewDecoder(r.Body)
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, nil, badRequest{"request body: want a JSON object: " + err.Error()}
	}
	if m == nil {
		return nil, nil, badRequest{"request body: want a JSON object, got null"}
	}
	return &fields{m: m}, nil, nil
}

func readPart(fh *multipart.FileHeader) ([]byte, error) {
	f, err := fh.Open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// decodeInputs decodes uploaded images (PNG, JPEG or GIF) and hashes their bytes.
func decodeInputs(f *fields, name string, files [][]byte) ([]image.Image, []byte) {
	var imgs []image.Image
	h := sha256.New()
	for i, b := range files {
		img, _, err := image.Decode(bytes.NewReader(b))
		if err != nil {
			f.bad("%s[%d]: cannot decode the image (PNG, JPEG or GIF): %v", name, i, err)
			continue
		}
		imgs = append(imgs, img)
		h.Write(b)
	}
	if len(imgs) == 0 {
		return nil, nil
	}
	return imgs, h.Sum(nil)
}

// parseCommon reads the fields shared by all generation requests.
func parseCommon(f *fields, k kind, defSize string) *genRequest {
	g := &genRequest{kind: k, n: 1}
	g.prompt = f.str("prompt", "")
	g.negative = f.str("negative_prompt", "")
	g.seed = f.integer("seed", defaultSeed, math.MinInt64, math.MaxInt64)
	g.steps = int(f.integer("num_inference_steps", defaultSteps, 1, maxSteps))
	f.number("guidance_scale", 0) // accepted and checked; the reference model ignores it
	size := f.str("size", "")
	if size == "" {
		size = defSize
	}
	if size != "" {
		var err error
		if g.w, g.h, err = parseSize(size); err != nil {
			f.bad("%v", err)
		}
	}
	return g
}

func parseImageOptions(f *fields, g *genRequest) {
	g.n = int(f.integer("n", 1, 0, maxImages))
	if g.n == 0 {
		g.n = 1
	}
	g.frames = 1
	if rf := f.str("response_format", "b64_json"); rf != "b64_json" && rf != "" {
		f.bad("response_format %q: the reference server answers b64_json only", rf)
	}
	switch of := strings.ToLower(f.str("output_format", "png")); of {
	case "", "png":
		g.format = "png"
	case "jpeg", "jpg":
		g.format = "jpeg"
	case "webp":
		g.format = "webp"
	default:
		f.bad("output_format %q: want png, jpeg or webp", of)
	}
}

// parseGeneration reads POST /v1/images/generations.
func parseGeneration(r *http.Request) (*genRequest, error) {
	f, _, err := readFields(r)
	if err != nil {
		return nil, err
	}
	if !f.has("prompt") {
		f.bad("prompt: required")
	}
	g := parseCommon(f, kindImage, "512x512")
	parseImageOptions(f, g)
	if len(f.problems) > 0 {
		return nil, f.problems
	}
	return g, nil
}

// parseEdit reads the multipart form of POST /v1/images/edits. Without a size, the output has
// the size of the first input image.
func parseEdit(r *http.Request) (*genRequest, error) {
	f, files, err := readFields(r)
	if err != nil {
		return nil, err
	}
	if files == nil {
		return nil, badRequest{"images/edits: want a multipart/form-data body with image files"}
	}
	uploads := append(files["image"], files["image[]"]...)
	if len(uploads) == 0 {
		f.bad("image: required (one or more files in field image or image[])")
	}
	g := parseCommon(f, kindEdit, "")
	parseImageOptions(f, g)
	g.inputs, g.inputHash = decodeInputs(f, "image", uploads)
	if g.w == 0 && len(g.inputs) > 0 {
		b := g.inputs[0].Bounds()
		if g.w, g.h, err = parseSize(fmt.Sprintf("%dx%d", b.Dx(), b.Dy())); err != nil {
			f.bad("image[0]: %v", err)
		}
	}
	if len(f.problems) > 0 {
		return nil, f.problems
	}
	return g, nil
}

// parseVideo reads POST /v1/videos, JSON or multipart (input_reference as a file). The frame
// count is num_frames, else round(seconds × fps), else 16; fps defaults to 8.
func parseVideo(r *http.Request) (*genRequest, error) {
	f, files, err := readFields(r)
	if err != nil {
		return nil, err
	}
	g := parseCommon(f, kindVideo, "256x256")
	if g.w%2 != 0 || g.h%2 != 0 {
		f.bad("size %dx%d: a video needs an even width and height (H.264 4:2:0)", g.w, g.h)
	}
	g.fps = int(f.integer("fps", defaultFPS, 1, maxFPS))
	g.seconds = f.number("seconds", 0)
	if g.seconds < 0 {
		f.bad("seconds: must be positive, got %v", g.seconds)
	}
	switch {
	case f.has("num_frames"):
		g.frames = int(f.integer("num_frames", defaultFrames, 1, maxFrames))
	case g.seconds > 0:
		g.frames = int(g.seconds*float64(g.fps) + 0.5)
		if g.frames < 1 || g.frames > maxFrames {
			f.bad("seconds × fps = %d frames: must be between 1 and %d", g.frames, maxFrames)
		}
	default:
		g.frames = defaultFrames
	}
	if g.seconds == 0 {
		g.seconds = float64(g.frames) / float64(g.fps)
	}
	g.audio = wantsAudio(f)
	if refs := files["input_reference"]; len(refs) > 0 {
		g.inputs, g.inputHash = decodeInputs(f, "input_reference", refs)
	} else if f.has("input_reference") {
		ref := f.str("input_reference", "")
		if data, ok := dataURI(ref); ok {
			g.inputs, g.inputHash = decodeInputs(f, "input_reference", [][]byte{data})
		} else if ref != "" {
			// A URL or a path the reference server does not fetch: it still changes the output.
			sum := sha256.Sum256([]byte(ref))
			g.inputHash = sum[:]
		}
	}
	if !f.has("prompt") && g.inputHash == nil {
		f.bad("prompt: required (or an input_reference)")
	}
	if len(f.problems) > 0 {
		return nil, f.problems
	}
	return g, nil
}

// wantsAudio is the rule for a video's audio track: "generate_audio" or "audio" set to true, or
// a "task" ending in "2va" (t2va, i2va, ref2va: video+audio), unless one of "generate_audio" or
// "audio" is explicitly false. The default is a silent video.
func wantsAudio(f *fields) bool {
	ga, gaSet := f.boolean("generate_audio")
	a, aSet := f.boolean("audio")
	if (gaSet && !ga) || (aSet && !a) {
		return false
	}
	task := strings.ToLower(f.str("task", ""))
	return ga || a || strings.HasSuffix(task, "2va")
}

// dataURI decodes "data:image/png;base64,...".
func dataURI(s string) ([]byte, bool) {
	rest, ok := strings.CutPrefix(s, "data:")
	if !ok {
		return nil, false
	}
	meta, payload, ok := strings.Cut(rest, ",")
	if !ok || !strings.HasSuffix(meta, ";base64") {
		return nil, false
	}
	b, err := base64.StdEncoding.DecodeString(payload)
	return b, err == nil
}
