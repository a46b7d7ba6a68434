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

	"github.com/diffusion-check/diffusion-check/internal/media"
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
	outputs          int    // videos per request (MiniMax-H3's n); 0 means 1
	minimax          bool   // validated and shaped as MiniMax-H3 (minimax.go)
	format           string // png, jpeg or webp (images)
	frames, fps      int    // 1 and 0 for images
	seconds          float64
	steps            int
	audio            bool
	inputs           []image.Image // edit images or the video's input_reference
	inputHash        []byte        // what the output depends on besides the fields above
	thinks           bool          // images: max_think_tokens > 0, a thinking model plans first (revisedPrompt)
}

func (g *genRequest) size() string { return fmt.Sprintf("%dx%d", g.w, g.h) }

// badRequest is a request the server rejects with 400, as SGLang's endpoints turn a ValueError
// into HTTPException(400, detail=str(e)); it lists every problem found.
type badRequest []string

func (b badRequest) Error() string { return strings.Join(b, "; ") }

// typeError is one entry of pydantic's validation error list, the shape FastAPI's 422 body
// carries in "detail" (pydantic_core ErrorDetails: type, loc, msg, input).
type typeError struct {
	Type  string `json:"type"`
	Loc   []any  `json:"loc"`
	Msg   string `json:"msg"`
	Input any    `json:"input"`
}

// invalidFields is a request whose fields have the wrong types, as pydantic rejects them.
// model names the pydantic model for the text form of the errors (VideoGenerationsRequest).
type invalidFields struct {
	model  string
	errors []typeError
}

func (e *invalidFields) Error() string { return e.pydanticText() }

// pydanticText renders the errors as str(ValidationError) does:
//
//	1 validation error for VideoGenerationsRequest
//	seconds
//	  Input should be a valid integer, got a number with a fractional part [type=int_from_float, input_value=2.5, input_type=float]
func (e *invalidFields) pydanticText() string {
	var b strings.Builder
	plural := "s"
	if len(e.errors) == 1 {
		plural = ""
	}
	fmt.Fprintf(&b, "%d validation error%s for %s", len(e.errors), plural, e.model)
	for _, te := range e.errors {
		var loc []string
		for _, l := range te.Loc[1:] { // without "body", as pydantic has no such prefix
			loc = append(loc, fmt.Sprint(l))
		}
		fmt.Fprintf(&b, "\n%s\n  %s [type=%s, input_value=%s, input_type=%s]", strings.Join(loc, "."), te.Msg, te.Type, pyRepr(te.Input), pyType(te.Input))
	}
	return b.String()
}

// pyRepr approximates Python's repr of a decoded JSON value.
func pyRepr(v any) string {
	switch v := v.(type) {
	case string:
		return "'" + strings.ReplaceAll(v, "'", "\\'") + "'"
	case bool:
		if v {
			return "True"
		}
		return "False"
	case nil:
		return "None"
	case json.Number:
		return v.String()
	}
	b, _ := json.Marshal(v) // decoded JSON re-encodes
	return string(b)
}

func pyType(v any) string {
	switch v := v.(type) {
	case string:
		return "str"
	case bool:
		return "bool"
	case nil:
		return "NoneType"
	case json.Number:
		if _, err := v.Int64(); err == nil {
			return "int"
		}
		return "float"
	case []any:
		return "list"
	case map[string]any:
		return "dict"
	}
	return fmt.Sprintf("%T", v)
}

// fields are the parameters of a request: decoded JSON values (json.Number for numbers) or,
// from a multipart form, strings. Accessors accept both as pydantic's lax mode does ("4" is an
// integer, 4.0 too, 4.5 is not), record a type error otherwise, and return def.
type fields struct {
	m         map[string]any
	multipart bool
	problems  badRequest
	types     []typeError
}

func (f *fields) bad(format string, args ...any) {
	f.problems = append(f.problems, fmt.Sprintf(format, args...))
}

func (f *fields) wrongType(name, typ, msg string) {
	f.types = append(f.types, typeError{Type: typ, Loc: []any{"body", name}, Msg: msg, Input: f.m[name]})
}

// err returns the request's problems: type errors first (pydantic rejects the body before any
// endpoint code runs), then the endpoint's own.
func (f *fields) err(model string) error {
	if len(f.types) > 0 {
		return &invalidFields{model: model, errors: f.types}
	}
	if len(f.problems) > 0 {
		return f.problems
	}
	return nil
}

func (f *fields) has(name string) bool { v, ok := f.m[name]; return ok && v != nil }

func (f *fields) str(name, def string) string {
	if !f.has(name) {
		return def
	}
	if v, ok := f.m[name].(string); ok {
		return v
	}
	f.wrongType(name, "string_type", "Input should be a valid string")
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
	default:
		f.wrongType(name, "float_type", "Input should be a valid number")
		return def
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || x-x != 0 {
		f.wrongType(name, "float_parsing", "Input should be a valid number, unable to parse string as a number")
		return def
	}
	return x
}

// integer reads an Optional[int] field; lo and hi bound it (a value outside is a 400 problem).
func (f *fields) integer(name string, def, lo, hi int64) int64 {
	if !f.has(name) {
		return def
	}
	var n int64
	switch v := f.m[name].(type) {
	case json.Number:
		var err error
		if n, err = v.Int64(); err != nil {
			x, ferr := v.Float64()
			if ferr != nil || x != math.Trunc(x) || math.Abs(x) >= 1<<63 {
				f.wrongType(name, "int_from_float", "Input should be a valid integer, got a number with a fractional part")
				return def
			}
			n = int64(x)
		}
	case string:
		var err error
		if n, err = strconv.ParseInt(strings.TrimSpace(v), 10, 64); err != nil {
			f.wrongType(name, "int_parsing", "Input should be a valid integer, unable to parse string as an integer")
			return def
		}
	default:
		f.wrongType(name, "int_type", "Input should be a valid integer")
		return def
	}
	if n < lo || n > hi {
		f.bad("%s: %d is out of range [%d, %d]", name, n, lo, hi)
		return def
	}
	return n
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
		f.wrongType(name, "bool_parsing", "Input should be a valid boolean, unable to interpret input")
		return false, false
	}
	f.wrongType(name, "bool_type", "Input should be a valid boolean")
	return false, false
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
		f := &fields{m: map[string]any{}, multipart: true}
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
	g.thinks = f.integer("max_think_tokens", 0, 0, 1<<20) > 0
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

// Pydantic models of SGLang's request bodies (runtime/entrypoints/openai/protocol.py), named
// in the text of their validation errors.
const (
	imageModel = "ImageGenerationsRequest"
	videoModel = "VideoGenerationsRequest"
)

// required records a missing required field as pydantic does (type "missing").
func (f *fields) required(name string) {
	if !f.has(name) {
		f.types = append(f.types, typeError{Type: "missing", Loc: []any{"body", name}, Msg: "Field required", Input: f.m})
	}
}

// parseGeneration reads POST /v1/images/generations (a JSON ImageGenerationsRequest).
func parseGeneration(r *http.Request, _ *model) (*genRequest, error) {
	f, _, err := readFields(r)
	if err != nil {
		return nil, err
	}
	f.required("prompt")
	g := parseCommon(f, kindImage, "512x512")
	parseImageOptions(f, g)
	if err := f.err(imageModel); err != nil {
		return nil, err
	}
	return g, nil
}

// errNoImage is what SGLang's images/edits answers without an image (image_api.py, edits:
// HTTPException(422, "Field 'image' or 'url' is required")).
var errNoImage = &httpStatusError{status: http.StatusUnprocessableEntity, detail: "Field 'image' or 'url' is required"}

// httpStatusError is an error answered with its own status and a {"detail": ...} body.
type httpStatusError struct {
	status int
	detail string
}

func (e *httpStatusError) Error() string { return e.detail }

// parseEdit reads the multipart form of POST /v1/images/edits. Without a size, the output has
// the size of the first input image.
func parseEdit(r *http.Request, _ *model) (*genRequest, error) {
	f, files, err := readFields(r)
	if err != nil {
		return nil, err
	}
	uploads := append(files["image"], files["image[]"]...)
	if len(uploads) == 0 {
		return nil, errNoImage
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
	if err := f.err(imageModel); err != nil {
		return nil, err
	}
	return g, nil
}

// parseVideo reads POST /v1/videos, JSON or multipart (input_reference as a file). seconds is
// an Optional[int] as in SGLang's VideoGenerationsRequest. The frame count is num_frames, else
// seconds × fps, else 16; fps defaults to 8. A MiniMax-H3 model takes its shape from
// extra.target instead (minimax.go).
func parseVideo(r *http.Request, m *model, tools media.Tools) (*genRequest, error) {
	f, files, err := readFields(r)
	if err != nil {
		return nil, err
	}
	if f.multipart && !f.has("prompt") {
		// video_api.py create_video: a form without a prompt is refused before validation.
		return nil, badRequest{"prompt is required"}
	}
	f.required("prompt")
	var g *genRequest
	if m.minimax {
		g = parseCommon(f, kindVideo, "")
	} else {
		g = parseCommon(f, kindVideo, "256x256")
	}
	g.fps = int(f.integer("fps", defaultFPS, 1, maxFPS))
	seconds := f.integer("seconds", 0, 0, maxFrames)
	frames := f.integer("num_frames", 0, 1, maxFrames)
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
	if len(f.types) > 0 {
		return nil, f.err(videoModel)
	}
	if m.minimax {
		if err := minimaxShape(r.Context(), tools, f, g); err != nil {
			return nil, err
		}
		return g, nil
	}
	if g.w%2 != 0 || g.h%2 != 0 {
		f.bad("size %dx%d: a video needs an even width and height (H.264 4:2:0)", g.w, g.h)
	}
	switch {
	case f.has("num_frames"):
		g.frames = int(frames)
	case seconds > 0:
		g.frames = int(seconds) * g.fps
		if g.frames < 1 || g.frames > maxFrames {
			f.bad("seconds × fps = %d frames: must be between 1 and %d", g.frames, maxFrames)
		}
	default:
		g.frames = defaultFrames
	}
	g.seconds = float64(seconds)
	if seconds == 0 {
		g.seconds = float64(g.frames) / float64(g.fps)
	}
	if err := f.err(videoModel); err != nil {
		return nil, err
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
