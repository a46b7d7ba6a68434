package refserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"math"
	"net/http"
	"net/url"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/fetch"
	"github.com/diffusion-check/diffusion-check/internal/media"
)

// model is what the served model changes in the API. Every model takes SGLang's generic
// request (the reference model); MiniMax-H3 validates video requests as SGLang's MiniMax-H3
// adapter does (minimaxShape).
type model struct {
	id      string
	minimax bool
}

func modelFor(id string) *model {
	// SGLang's registry resolves a model by its path; the published checkpoint is
	// MiniMaxAI/MiniMax-H3 (test/server/gpu_cases.py, MINIMAX_H3 cases).
	return &model{id: id, minimax: strings.EqualFold(path.Base(id), "MiniMax-H3")}
}

// MiniMax-H3's constants, from SGLang (python/sglang/multimodal_gen/runtime/pipelines_core/
// stages/model_specific_stages/minimax_h3/constants.py and resolved_plan.py).
const (
	minimaxFPS            = 24   // MINIMAX_H3_SUPPORTED_FPS
	minimaxMinDurationS   = 4.0  // MINIMAX_H3_MIN_DURATION_SECONDS
	minimaxMaxDurationS   = 15.0 // MINIMAX_H3_MAX_DURATION_SECONDS
	minimaxMaxPixels      = 768 * 1344
	minimaxCanvasMultiple = 32
	minimaxMaxOutputs     = 10 // video_api.py: num_outputs_per_prompt = max(1, min(n, 10))
)

// minimaxAspectRatios is MINIMAX_H3_FINITE_ASPECT_RATIOS (task_profiles.py).
var minimaxAspectRatios = []string{"21:9", "16:9", "4:3", "1:1", "3:4", "9:16"}

// minimaxTask is one row of MINIMAX_H3_TASK_PROFILES (task_profiles.py), reduced to what the
// request validation reads.
type minimaxTask struct {
	conditionsRequired bool
	role               string   // the one condition role the task admits
	types              []string // the condition types it admits
	frameIndex         bool     // conditions carry a frame_index (keyframes)
	minConditions      int
	maxConditions      int
	finiteRatiosOnly   bool // aspect_ratio must be "auto" or one of minimaxAspectRatios
	durationFromAudio  bool // target.duration_seconds may come from one audio reference
}

var minimaxTasks = map[string]minimaxTask{
	"t2va":  {finiteRatiosOnly: true},
	"fl2va": {conditionsRequired: true, role: "keyframe", types: []string{"image"}, frameIndex: true, minConditions: 1, maxConditions: 2},
	"ref2va": {
		conditionsRequired: true,
		role:               "reference",
		types:              []string{"image", "video", "video_audio", "audio"},
		finiteRatiosOnly:   true,
		durationFromAudio:  true,
	},
}

// minimaxRetired are request fields MiniMax-H3 refuses whenever they are set
// (video_adapter.py: _reject_transport_timing_fields, then _reject_retired_cfg_fields).
var minimaxRetired = []struct{ field, why string }{
	{"num_frames", "MiniMax H3 derives the temporal shape from target.duration_seconds"},
	{"fps", "MiniMax H3 derives the temporal shape from target.duration_seconds"},
	{"guidance_scale", "MiniMax H3 serves only the CFG-distilled single-positive-branch checkpoint"},
	{"guidance_scale_2", "MiniMax H3 serves only the CFG-distilled single-positive-branch checkpoint"},
	{"true_cfg_scale", "MiniMax H3 serves only the CFG-distilled single-positive-branch checkpoint"},
	{"negative_prompt", "MiniMax H3 serves only the CFG-distilled single-positive-branch checkpoint"},
}

// errMaterialUnreadable is a condition uri that cannot be read. SGLang raises
// FileNotFoundError (or urllib's URLError) there, which create_video does not turn into a 400:
// Starlette answers 500 "Internal Server Error".
type errMaterialUnreadable struct{ msg string }

func (e *errMaterialUnreadable) Error() string { return e.msg }

// minimaxShape validates a MiniMax-H3 video request in SGLang's order and sets the canvas,
// the frame count and the audio from extra.target and extra.task. size and seconds are
// ignored (the canvas comes from the target); input_reference never becomes a condition.
// Every message is SGLang's own, from video_adapter.py (lower_video_request_kwargs,
// validate_transport_options), request_validation.py (minimax_h3_validate_canonical_request)
// and material_io.py (minimax_h3_localize_material_uri).
func minimaxShape(ctx context.Context, tools media.Tools, f *fields, g *genRequest) error {
	bad := func(format string, args ...any) error { return badRequest{fmt.Sprintf(format, args...)} }
	extra := f.extra
	task, err := minimaxTaskGate(f)
	if err != nil {
		return err
	}
	// minimax_h3_validate_canonical_request
	profile := minimaxTasks[task]
	if g.prompt == "" {
		return bad("prompt must be a non-empty string")
	}
	w, h, duration, base, err := minimaxTarget(extra("target"), task, profile)
	if err != nil {
		return err
	}
	conds, err := minimaxConditions(extra("conditions"), task, profile, duration)
	if err != nil {
		return err
	}
	for _, name := range []string{"flow_shift", "audio_flow_shift"} {
		if v := extra(name); v != nil {
			if _, isBool := v.(bool); isBool {
				return bad("%s must be a number", name)
			}
			if x, ok := finite(v); !ok || x <= 0 {
				return bad("%s must be a positive finite number", name)
			}
		}
	}
	if g.seed < 0 {
		return bad("seed must be non-negative, got %d", g.seed)
	}
	sum, duration, err := minimaxLocalize(ctx, tools, conds, g, duration)
	if err != nil {
		return err
	}
	if duration == 0 {
		return bad(
			"target.duration_seconds is required, or exactly one audio reference to derive duration from (including video/video_audio soundtracks; task %s)",
			pyRepr(task))
	}
	if duration < minimaxMinDurationS || duration > minimaxMaxDurationS {
		return bad("target.duration_seconds must be in [%g, %g], got %v", minimaxMinDurationS, minimaxMaxDurationS, duration)
	}
	if w == 0 { // fl2va with aspect_ratio "auto": the first keyframe's geometry
		if len(g.inputs) == 0 {
			return bad("MiniMax H3 target geometry remained unresolved before queue")
		}
		b := g.inputs[0].Bounds()
		if w, h, err = minimaxCanvas(float64(b.Dx()), float64(b.Dy()), base); err != nil {
			return err
		}
	}
	// An input_reference upload is not a condition: only extra.conditions reach the model.
	g.inputs, g.inputHash = nil, nil
	if len(conds) > 0 {
		g.inputHash = sum
	}
	g.w, g.h, g.fps = w, h, minimaxFPS
	g.frames = minimaxFrames(int(math.RoundToEven(duration * minimaxFPS)))
	g.seconds = float64(g.frames) / minimaxFPS
	g.audio = true // every MiniMax-H3 task makes video and audio ("2va")
	g.outputs = max(1, min(int(f.integer("n", 1, math.MinInt64, math.MaxInt64)), minimaxMaxOutputs))
	g.minimax = true
	return nil
}

// minimaxTaskGate is SGLang's validate_task_gate and validate_transport_options: the task,
// and the options MiniMax-H3 refuses whatever the task.
func minimaxTaskGate(f *fields) (string, error) {
	bad := func(format string, args ...any) error { return badRequest{fmt.Sprintf(format, args...)} }
	extra := f.extra
	taskV := extra("task")
	task, isStr := taskV.(string)
	switch {
	case taskV == nil:
		return "", bad("task is required for MiniMax H3; supported tasks: fl2va, ref2va, t2va")
	case !isStr || strings.TrimSpace(task) == "":
		return "", bad("task must be a non-empty string for MiniMax H3")
	case !knownTask(task):
		return "", bad("unsupported MiniMax H3 task %s; supported tasks: fl2va, ref2va, t2va", pyRepr(task))
	}
	if v := extra("audio_flow_shift"); v != nil {
		if x, ok := finite(v); !ok || x <= 0 {
			return "", bad("audio_flow_shift must be a positive finite float")
		}
	}
	if extra("audio_guidance_scale") != nil {
		return "", bad("audio_guidance_scale is not supported: MiniMax H3 serves only the CFG-distilled single-positive-branch checkpoint")
	}
	if om := extra("output_mode"); om != nil && om != "decoded_files" {
		return "", bad("MiniMax H3 SGLang backend only supports output_mode='decoded_files', got %s", pyRepr(om))
	}
	if v, _ := f.boolean("enable_frame_interpolation"); v {
		return "", bad("MiniMax H3 does not support enable_frame_interpolation: the accepted delivery contract is the canonical 24 fps output")
	}
	if v, _ := f.boolean("enable_upscaling"); v {
		return "", bad("MiniMax H3 does not support enable_upscaling: the accepted delivery contract is the resolved target canvas")
	}
	for _, r := range minimaxRetired {
		if f.has(r.field) {
			return "", bad("%s is not supported: %s", r.field, r.why)
		}
	}
	return task, nil
}

// minimaxLocalize is SGLang's minimax_h3_prepare_for_queue: every condition is read and probed
// before queueing. It returns the hash of the conditions' bytes and the duration, taken from
// an audio-bearing condition when the target sets none; the first image condition becomes
// the request's input picture.
func minimaxLocalize(ctx context.Context, tools media.Tools, conds []minimaxCondition, g *genRequest, duration float64) ([]byte, float64, error) {
	hash := sha256.New()
	for i, c := range conds {
		data, err := readMaterial(ctx, c.uri)
		if err != nil {
			return nil, 0, err
		}
		probed, err := probeMaterial(ctx, tools, data, c.typ)
		if err != nil {
			return nil, 0, err
		}
		if duration == 0 && probed > 0 {
			duration = probed
		}
		if c.typ == "image" && i == 0 {
			if img, _, err := image.Decode(bytes.NewReader(data)); err == nil {
				g.inputs = []image.Image{img}
			}
		}
		hash.Write(data)
	}
	return hash.Sum(nil), duration, nil
}

// extra is a request field of MiniMax-H3's extras as SGLang reads it (_parse_extra_value): a
// form value is JSON text when it parses, with numbers kept as json.Number so that 768.0
// stays a float, as in Python.
func (f *fields) extra(name string) any {
	v := f.m[name]
	if s, ok := v.(string); ok && f.multipart {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		var decoded any
		if dec.Decode(&decoded) == nil && !dec.More() {
			return decoded
		}
	}
	return v
}

func knownTask(task string) bool { _, ok := minimaxTasks[task]; return ok }

func finite(v any) (float64, bool) {
	var x float64
	var err error
	switch v := v.(type) {
	case json.Number:
		x, err = v.Float64()
	case string:
		x, err = strconv.ParseFloat(strings.TrimSpace(v), 64)
	default:
		return 0, false
	}
	return x, err == nil && !math.IsInf(x, 0) && !math.IsNaN(x)
}

// pyInt is _require_int: an int, not a bool, not a float.
func pyInt(v any) (int64, bool) {
	switch v := v.(type) {
	case json.Number:
		n, err := v.Int64()
		return n, err == nil
	}
	return 0, false
}

// minimaxTarget is _validate_target plus the canvas of resolved_plan.py: width and height (0
// while fl2va's "auto" waits for its keyframe) and the duration (0 when a ref2va reference
// gives it).
func minimaxTarget(v any, task string, p minimaxTask) (w, h int, durationS float64, base int, err error) {
	bad := func(format string, args ...any) (int, int, float64, int, error) {
		return 0, 0, 0, 0, badRequest{fmt.Sprintf(format, args...)}
	}
	t, ok := asObject(v)
	if !ok {
		return bad("target is required and must be an object")
	}
	se, ok := pyInt(t["short_edge"])
	if !ok {
		return bad("target.short_edge must be an integer")
	}
	// Since SGLang #35664 a short edge other than the recommended 768 only warns
	// (request_validation.py _validate_target, constants.py warn_unverified_short_edge): the
	// shape math scales it like any other.
	if se <= 0 {
		return bad("target.short_edge must be positive, got %d", se)
	}
	ar, ok := t["aspect_ratio"].(string)
	if !ok || ar == "" {
		return bad("target.aspect_ratio must be a non-empty string")
	}
	if p.finiteRatiosOnly && ar != "auto" && !slices.Contains(minimaxAspectRatios, ar) {
		return bad("target.aspect_ratio for task %s must be 'auto' or one of ['21:9', '16:9', '4:3', '1:1', '3:4', '9:16'], got %s", pyRepr(task), pyRepr(ar))
	}
	d, hasDuration := t["duration_seconds"]
	switch {
	case !hasDuration || d == nil:
		if !p.durationFromAudio {
			return bad("target.duration_seconds is required")
		}
	default:
		if _, isBool := d.(bool); isBool {
			return bad("target.duration_seconds must be a number")
		}
		x, ok := finite(d)
		if _, isStr := d.(string); isStr || !ok {
			return bad("target.duration_seconds must be a number")
		}
		if x <= 0 {
			return bad("target.duration_seconds must be positive")
		}
		if x < minimaxMinDurationS || x > minimaxMaxDurationS {
			return bad("target.duration_seconds must be in [%g, %g], got %s", minimaxMinDurationS, minimaxMaxDurationS, pyRepr(d))
		}
		durationS = x
	}
	if ar == "auto" {
		if task == "fl2va" {
			return 0, 0, durationS, int(se), nil // auto_geometry_source "first_keyframe"
		}
		ar = "16:9" // auto_aspect_ratio of t2va and ref2va
	}
	aw, ah, ok := strings.Cut(ar, ":")
	wn, err1 := strconv.Atoi(aw)
	hn, err2 := strconv.Atoi(ah)
	if !ok || err1 != nil || err2 != nil || wn <= 0 || hn <= 0 {
		return bad("target.aspect_ratio must be integer 'W:H', got %s", pyRepr(ar))
	}
	w, h, err = minimaxCanvas(float64(wn), float64(hn), int(se))
	return w, h, durationS, int(se), err
}

// minimaxCanvas is minimax_h3_resolve_spatial_shape (resolved_plan.py, adapt_shape_v1): the
// short edge at base (the target's short_edge, 768 recommended), the area capped at 768×1344,
// both sides rounded to the nearest 32.
func minimaxCanvas(rw, rh float64, base int) (w, h int, err error) {
	ratio := rw / rh
	if ratio < 0.25 || ratio > 4 {
		return 0, 0, badRequest{fmt.Sprintf("adapt_shape_v1 ratio must be within the inclusive range 1:4 to 4:1, got %g:%g", rw, rh)}
	}
	nw, nh := float64(base)*ratio, float64(base)
	if ratio < 1 {
		nw, nh = float64(base), float64(base)/ratio
	}
	if area := nw * nh; area > minimaxMaxPixels {
		s := math.Sqrt(minimaxMaxPixels / area)
		nw, nh = nw*s, nh*s
	}
	near := func(x float64) int {
		return max(minimaxCanvasMultiple, int(math.RoundToEven(x/minimaxCanvasMultiple))*minimaxCanvasMultiple)
	}
	return near(nw), near(nh), nil
}

// minimaxFrames is minimax_h3_align_frame_count (time_request.py): up to the next 17n+5.
func minimaxFrames(n int) int {
	if n <= 0 {
		return 1
	}
	return n + ((5-n)%17+17)%17
}

type minimaxCondition struct{ typ, uri string }

// minimaxCondition1 checks conditions[i] as _validate_conditions does: its keys, role, type,
// uri, frame_index (resolved against the aligned frame count, each bound once: seen) and
// start time. It returns the condition and its frame_index as written, when the task takes one.
func minimaxCondition1(i int, raw any, task string, p minimaxTask, aligned int, seen map[int64]int) (minimaxCondition, *int64, error) {
	var frame *int64
	at := fmt.Sprintf("conditions[%d]", i)
	c, ok := asObject(raw)
	if !ok {
		return minimaxCondition{}, nil, badCondition("%s must be an object", at)
	}
	var unknown []string
	for k := range c {
		if !slices.Contains([]string{"type", "uri", "role", "frame_index", "start_time_seconds"}, k) {
			unknown = append(unknown, "'"+k+"'")
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return minimaxCondition{}, nil, badCondition("%s has unknown fields: [%s]", at, strings.Join(unknown, ", "))
	}
	role, _ := c["role"].(string)
	if role == "" {
		return minimaxCondition{}, nil, badCondition("%s.role must be a non-empty string", at)
	}
	if role != "keyframe" && role != "reference" {
		return minimaxCondition{}, nil, badCondition("%s.role must be keyframe or reference, got %s", at, pyRepr(role))
	}
	typ, _ := c["type"].(string)
	if typ == "" {
		return minimaxCondition{}, nil, badCondition("%s.type must be a non-empty string", at)
	}
	if role != p.role || !slices.Contains(p.types, typ) {
		return minimaxCondition{}, nil, badCondition("%s: task %s does not allow condition role=%s type=%s", at, pyRepr(task), pyRepr(role), pyRepr(typ))
	}
	uri, _ := c["uri"].(string)
	if uri == "" {
		return minimaxCondition{}, nil, badCondition("%s.uri must be a non-empty string", at)
	}
	if p.frameIndex {
		fi, ok := pyInt(c["frame_index"])
		if !ok {
			return minimaxCondition{}, nil, badCondition("%s.frame_index must be an integer", at)
		}
		if aligned == 0 {
			return minimaxCondition{}, nil, badCondition("%s.frame_index requires a resolved target duration", at)
		}
		resolved := fi
		if fi == -1 {
			resolved = int64(aligned - 1)
		} else if fi < 0 || fi >= int64(aligned) {
			return minimaxCondition{}, nil, badCondition("%s.frame_index must be -1 or in [0, %d) after 17n+5 frame alignment, got %d", at, aligned, fi)
		}
		if j, dup := seen[resolved]; dup {
			return minimaxCondition{}, nil, badCondition("%s.frame_index resolves to %d, already bound by conditions[%d]", at, resolved, j)
		}
		seen[resolved] = i
		frame = &fi
	} else if c["frame_index"] != nil {
		return minimaxCondition{}, nil, badCondition("%s.frame_index is not allowed for role=%s", at, pyRepr(role))
	}
	if st := c["start_time_seconds"]; st != nil {
		if x, ok := finite(st); !ok || x < 0 {
			return minimaxCondition{}, nil, badCondition("%s.start_time_seconds must be a non-negative finite number", at)
		}
		if typ != "video" && typ != "video_audio" {
			return minimaxCondition{}, nil, badCondition("%s.start_time_seconds is only allowed for video or video_audio references", at)
		}
	}
	return minimaxCondition{typ: typ, uri: uri}, frame, nil
}

func badCondition(format string, args ...any) error { return badRequest{fmt.Sprintf(format, args...)} }

// minimaxConditions is _validate_conditions and _validate_fl2va_conditions.
func minimaxConditions(v any, task string, p minimaxTask, durationS float64) ([]minimaxCondition, error) {
	bad := func(format string, args ...any) ([]minimaxCondition, error) {
		return nil, badRequest{fmt.Sprintf(format, args...)}
	}
	if v == nil {
		v = []any{}
	}
	list, ok := v.([]any)
	if !ok {
		return bad("conditions must be a list")
	}
	if !p.conditionsRequired {
		if len(list) > 0 {
			return bad("conditions must be empty for task %s (got %d entries)", pyRepr(task), len(list))
		}
		return nil, nil
	}
	switch {
	case len(list) == 0:
		return bad("conditions requires at least one entry for task %s", pyRepr(task))
	case p.minConditions > 0 && len(list) < p.minConditions:
		return bad("conditions requires at least %d entries for task %s, got %d", p.minConditions, pyRepr(task), len(list))
	case p.maxConditions > 0 && len(list) > p.maxConditions:
		return bad("conditions allows at most %d entries for task %s, got %d", p.maxConditions, pyRepr(task), len(list))
	}
	aligned := 0
	if durationS > 0 {
		aligned = minimaxFrames(int(math.RoundToEven(durationS * minimaxFPS)))
	}
	var out []minimaxCondition
	var indices []int64
	seen := map[int64]int{}
	for i, raw := range list {
		c, fi, err := minimaxCondition1(i, raw, task, p, aligned, seen)
		if err != nil {
			return nil, err
		}
		if fi != nil {
			indices = append(indices, *fi)
		}
		out = append(out, c)
	}
	if task == "fl2va" {
		ok := slices.Equal(indices, []int64{0}) || slices.Equal(indices, []int64{-1}) || slices.Equal(indices, []int64{0, -1})
		if !ok {
			return bad("conditions for task 'fl2va' must be one or two ordered image/keyframe entries with frame_index [0], [-1], or [0, -1], got %v",
				strings.ReplaceAll(fmt.Sprint(indices), " ", ", "))
		}
	}
	if durationS == 0 {
		var sources int
		for _, c := range out {
			if c.typ != "image" {
				sources++
			}
		}
		if sources == 0 {
			return bad(
				"target.duration_seconds is required, or exactly one audio reference to derive duration from (including video/video_audio soundtracks; task %s)",
				pyRepr(task),
			)
		}
		if sources > 1 {
			return bad("target.duration_seconds is required when multiple audio-bearing references are provided")
		}
	}
	return out, nil
}

func asObject(v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	return m, ok
}

// maxMaterial bounds a condition's bytes, as maxBody bounds a request.
const maxMaterial = maxBody

// materialLimits bound the fetch of an http(s) material: 60 s for the whole fetch (SGLang's
// _stream_http_material gives urlopen 120 s per socket operation, material_io.py), urllib's 10
// redirects (HTTPRedirectHandler.max_redirections), the material's cap.
var materialLimits = fetch.Limits{MaxBytes: maxMaterial, Timeout: 60 * time.Second, MaxRedirects: 10}

// readMaterial is minimax_h3_localize_material_uri for the schemes a test can use: a local
// path, file://, data: (base64) and http(s). A missing file or a failed fetch is an
// errMaterialUnreadable (500, as SGLang's uncaught FileNotFoundError/URLError); an empty one
// a 400, with SGLang's message.
func readMaterial(ctx context.Context, uri string) ([]byte, error) {
	const label = "MiniMax H3 material source"
	if data, ok := dataURI(uri); ok {
		if len(data) == 0 {
			return nil, badRequest{"material URI decoded payload is empty"}
		}
		return data, nil
	}
	if strings.HasPrefix(uri, "data:") {
		return nil, badRequest{"data URI must use ;base64 encoding"}
	}
	u, err := url.Parse(uri)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		b, err := fetch.Get(ctx, nil, uri, materialLimits)
		var se *fetch.StatusError
		switch {
		case errors.As(err, &se):
			return nil, &errMaterialUnreadable{fmt.Sprintf("HTTP Error %d: %s", se.Code, http.StatusText(se.Code))}
		case err != nil:
			return nil, &errMaterialUnreadable{err.Error()}
		case len(b.Data) == 0:
			return nil, badRequest{"HTTP material body is empty: " + uri}
		}
		return b.Data, nil
	}
	p := uri
	if err == nil && u.Scheme == "file" {
		if u.Host != "" && u.Host != "localhost" {
			return nil, badRequest{fmt.Sprintf("file URI host must be local, got %s", pyRepr(u.Host))}
		}
		p = u.Path
	} else if err == nil && u.Scheme != "" && len(u.Scheme) > 1 {
		return nil, badRequest{fmt.Sprintf("unsupported MiniMax H3 material URI scheme %s", pyRepr(u.Scheme))}
	}
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() {
		return nil, &errMaterialUnreadable{fmt.Sprintf("%s does not exist or is not a file: %s", label, p)}
	}
	if st.Size() == 0 {
		return nil, badRequest{fmt.Sprintf("%s is empty: %s", label, p)}
	}
	if st.Size() > maxMaterial {
		return nil, badRequest{fmt.Sprintf("%s is larger than %d MiB: %s", label, maxMaterial>>20, p)}
	}
	return os.ReadFile(p)
}

// probeMaterial is material_io.py's _validate_localized_media: an image must decode; a video,
// video_audio or audio reference must hold the streams its type names. It returns the media's
// duration in seconds (0 for an image), which a ref2va request without a duration takes.
func probeMaterial(ctx context.Context, tools media.Tools, data []byte, typ string) (float64, error) {
	if typ == "image" {
		if _, _, err := image.DecodeConfig(bytes.NewReader(data)); err != nil {
			return 0, badRequest{"MiniMax H3 image material is invalid"}
		}
		return 0, nil
	}
	f, err := os.CreateTemp("", "refserver-material-*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name())
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return 0, werr
	}
	info, err := tools.Probe(ctx, f.Name())
	if err != nil {
		return 0, badRequest{"MiniMax H3 media material is invalid"}
	}
	if (typ == "video" || typ == "video_audio") && info.Frames < 1 && info.Width == 0 {
		return 0, badRequest{"MiniMax H3 video material has no video stream"}
	}
	if (typ == "audio" || typ == "video_audio") && info.Audio == nil {
		return 0, badRequest{"MiniMax H3 audio material has no audio stream"}
	}
	d := info.DurationS
	if d <= 0 && info.Audio != nil {
		d = info.Audio.DurationS
	}
	if d <= 0 {
		return 0, badRequest{"MiniMax H3 media material has no positive duration"}
	}
	return d, nil
}
