package refserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Handler is the reference server's HTTP API (docs/sglang-compat.md §2). warmHandler makes one; Serve wraps it in
// a listening server. Close stops its background work.
type Handler struct {
	cfg   Config
	model *model
	loras *loras // the LoRA adapters loaded and applied (lora.go)
	// batch is the scheduler of dynamic batching (batching.go); nil when it merges nothing.
	batch  *batcher
	mux    *http.ServeMux
	commit string
	// warm is closed when the warm-up generation has ended; until then /health answers 503
	// and every other path but the bypass list waits (SGLang's wait_for_server_warmup).
	warm     chan struct{}
	warmOnce sync.Once

	// ctx is cancelled by Close: it aborts running generations.
	ctx    context.Context
	cancel context.CancelFunc
	// stopping is closed first on shutdown: it releases hung requests, so that a graceful
	// shutdown can wait for the healthy ones.
	stopping  chan struct{}
	stopOnce  sync.Once
	crashed   chan struct{}
	crashOnce sync.Once
	wg        sync.WaitGroup // video jobs and pending perf records

	logMu  sync.Mutex // one log line at a time
	perfMu sync.Mutex // one performance.log append at a time

	mu     sync.Mutex // guards the fields below
	closed bool
	count  int // generation requests received so far
	jobs   map[string]*videoJob
	order  []string

	webpOnce sync.Once
	webpErr  error
}

// warmHandler returns the API of a reference server with cfg (defaults applied for zero fields),
// already warm. The caller must Close it. Use Serve for the whole server: startup log,
// fail-startup fault, listening, warm-up and graceful shutdown.
func warmHandler(cfg Config) *Handler {
	h := newHandler(cfg)
	h.warmed()
	return h
}

func newHandler(cfg Config) *Handler {
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	h := &Handler{
		cfg: cfg, model: modelFor(cfg.Model), loras: newLoras(cfg.LoraPath), commit: commitHash(), ctx: ctx, cancel: cancel,
		warm: make(chan struct{}), stopping: make(chan struct{}), crashed: make(chan struct{}),
		jobs: map[string]*videoJob{},
	}
	h.batch = newBatcher(h)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", h.health)
	mux.HandleFunc("GET /health_generate", h.health)
	mux.HandleFunc("GET /liveness", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, statusOK) })
	mux.HandleFunc("GET /v1/models", h.models)
	mux.HandleFunc("GET /v1/models/{model...}", h.retrieveModel)
	mux.HandleFunc("POST /v1/images/generations", h.images(parseGeneration))
	mux.HandleFunc("POST /v1/images/edits", h.images(parseEdit))
	mux.HandleFunc("POST /v1/chat/completions", h.chat)
	mux.HandleFunc("POST /v1/videos", h.createVideo)
	mux.HandleFunc("GET /v1/videos", h.listVideos)
	mux.HandleFunc("GET /v1/videos/{id}", h.getVideo)
	mux.HandleFunc("DELETE /v1/videos/{id}", h.deleteVideo)
	mux.HandleFunc("GET /v1/videos/{id}/content", h.videoContent)
	mux.HandleFunc("GET "+RealtimePath, h.realtime)
	mux.HandleFunc("POST /v1/set_lora", h.setLoRA)
	mux.HandleFunc("POST /v1/merge_lora_weights", h.mergeLoRA(true))
	mux.HandleFunc("POST /v1/unmerge_lora_weights", h.mergeLoRA(false))
	mux.HandleFunc("GET /v1/list_loras", h.listLoRAs)
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusNotFound, "Not Found") // Starlette's answer for no route
	})
	h.mux = mux
	return h
}

// statusOK is the body of SGLang's /health and /liveness (http_server.py: {"status": "ok"}).
var statusOK = map[string]string{"status": "ok"}

// warmupBypass are the paths SGLang answers during warm-up (http_server.py,
// SERVER_WARMUP_BYPASS_PATHS); the reference server has the first three.
var warmupBypass = []string{"/liveness", "/health", "/health_generate", "/model_info", "/server_info"}

func (h *Handler) warmed() { h.warmOnce.Do(func() { close(h.warm) }) }

func (h *Handler) isWarm() bool {
	select {
	case <-h.warm:
		return true
	default:
		return false
	}
}

// ServeHTTP serves the API and writes an access-log line per request (polls excepted). During
// warm-up it holds every request but the bypass paths. After a crash fault (with a cfg.Exit
// that returned) every request is dropped, as by a dead process.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.isCrashed() {
		panic(http.ErrAbortHandler)
	}
	if !h.isWarm() && !slices.Contains(warmupBypass, r.URL.Path) {
		select {
		case <-h.warm:
		case <-r.Context().Done():
			return
		case <-h.stopping:
			writeError(w, http.StatusServiceUnavailable, "server is shutting down")
			return
		}
	}
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	h.mux.ServeHTTP(rec, r)
	if r.Method != http.MethodGet || r.URL.Path == "/v1/models" {
		h.writeLog(fmt.Sprintf("INFO:     %s - \"%s %s %s\" %d %s\n", r.RemoteAddr, r.Method, r.URL.RequestURI(), r.Proto, rec.status, http.StatusText(rec.status)))
	}
}

// Close releases hung requests, aborts running generations, writes the perf records still
// waiting for their lag and waits for all background goroutines. It is safe to call twice.
func (h *Handler) Close() {
	h.stop()
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.cancel()
	h.wg.Wait()
}

// Crashed is closed when a crash fault has happened (and cfg.Exit returned, as a fake does).
func (h *Handler) Crashed() <-chan struct{} { return h.crashed }

func (h *Handler) stop() { h.stopOnce.Do(func() { close(h.stopping) }) }

func (h *Handler) markCrashed() { h.crashOnce.Do(func() { close(h.crashed) }) }

func (h *Handler) isCrashed() bool {
	select {
	case <-h.crashed:
		return true
	default:
		return false
	}
}

// next numbers a generation request as it arrives, rejected ones included: the request
// numbers of Faults count every generation request received.
func (h *Handler) next() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.count++
	return h.count
}

// goBackground runs f in a tracked goroutine, or reports false once Close has begun.
func (h *Handler) goBackground(f func()) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		f()
	}()
	return true
}

// health is SGLang's /health: an empty 503 until warm-up has ended, then {"status": "ok"}.
func (h *Handler) health(w http.ResponseWriter, _ *http.Request) {
	if !h.isWarm() {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	writeJSON(w, http.StatusOK, statusOK)
}

// imageData is SGLang's ImageResponseData (entrypoints/openai/protocol.py) as a b64_json
// answer fills it (image_api.py): the image and the revised prompt (revisedPrompt).
type imageData struct {
	B64JSON       string `json:"b64_json"`
	RevisedPrompt string `json:"revised_prompt"`
}

type imageResponse struct {
	ID             string      `json:"id"`
	Created        int64       `json:"created"`
	Data           []imageData `json:"data"`
	PeakMemoryMB   float64     `json:"peak_memory_mb"`
	InferenceTimeS float64     `json:"inference_time_s"`
}

// images serves /v1/images/generations and /v1/images/edits: the generation runs in the
// request, which answers when it is done.
func (h *Handler) images(parse func(*http.Request, *model) (*genRequest, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		number := h.next()
		g, err := parse(r, h.model)
		if err != nil {
			writeRequestError(w, err, false)
			return
		}
		if g.format == "webp" {
			if err := h.webpAvailable(); err != nil {
				writeError(w, http.StatusBadRequest, "output_format webp: "+err.Error())
				return
			}
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		defer context.AfterFunc(h.ctx, cancel)()

		rn := run{id: newID(), number: number, req: g}
		h.logStart(rn)
		generate := h.generate
		if h.batch != nil {
			generate = h.batch.generate
		}
		out, err := generate(ctx, rn)
		switch {
		case errors.Is(err, errCrashed):
			panic(http.ErrAbortHandler) // the connection dies with the "process"
		case err != nil && r.Context().Err() != nil:
			h.logf("INFO", "[%s #%d] client went away: %v", rn.id, rn.number, err)
			return
		case errors.Is(err, errHung), err != nil && h.ctx.Err() != nil:
			h.logf("WARNING", "[%s #%d] aborted: %v", rn.id, rn.number, err)
			writeError(w, http.StatusServiceUnavailable, "server is shutting down")
			return
		case err != nil:
			h.logf("ERROR", "[%s #%d] %v", rn.id, rn.number, err)
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
		h.logDone(rn, out)
		h.recordPerf(rn, out) // before the response, as SGLang's GPU worker logs it
		resp := imageResponse{ID: rn.id, Created: time.Now().Unix(), PeakMemoryMB: out.mem.RuntimePeak.PeakReservedMB,
			InferenceTimeS: round(out.total.Seconds(), 4)}
		for _, m := range out.media {
			resp.Data = append(resp.Data, imageData{B64JSON: base64.StdEncoding.EncodeToString(m), RevisedPrompt: h.revisedPrompt(rn.req)})
		}
		writeJSON(w, http.StatusOK, resp)
	}
}

func (h *Handler) webpAvailable() error {
	h.webpOnce.Do(func() {
		if !h.cfg.Tools.HasEncoder("libwebp") {
			h.webpErr = errors.New("not available: this ffmpeg has no libwebp encoder; ask for png or jpeg")
		}
	})
	return h.webpErr
}

// videoJob is a video generation job as /v1/videos shows it: SGLang's VideoResponse
// (runtime/entrypoints/openai/protocol.py), every field, in its order.
type videoJob struct {
	ID                 string         `json:"id"`
	Object             string         `json:"object"`
	Model              string         `json:"model"`
	Status             string         `json:"status"`
	Progress           int            `json:"progress"`
	CreatedAt          int64          `json:"created_at"`
	Size               string         `json:"size"`
	Seconds            string         `json:"seconds"`
	Quality            string         `json:"quality"`
	URL                *string        `json:"url"`
	RemixedFromVideoID *string        `json:"remixed_from_video_id"`
	CompletedAt        *int64         `json:"completed_at"`
	ExpiresAt          *int64         `json:"expires_at"`
	Error              map[string]any `json:"error"`
	FilePath           *string        `json:"file_path"`
	FilePaths          []string       `json:"file_paths"`
	NumOutputs         *int           `json:"num_outputs"`
	PeakMemoryMB       *float64       `json:"peak_memory_mb"`
	InferenceTimeS     *float64       `json:"inference_time_s"`
	Action             map[string]any `json:"action"`

	content [][]byte
}

// Video job statuses as SGLang sets them (video_api.py): a job is "queued" from creation until
// it ends "completed" (progress 100) or "failed"; DELETE answers it as "deleted". SGLang has
// no in-progress status and no intermediate progress.
const (
	jobQueued    = "queued"
	jobCompleted = "completed"
	jobFailed    = "failed"
	jobDeleted   = "deleted"
)

func (h *Handler) createVideo(w http.ResponseWriter, r *http.Request) {
	number := h.next()
	g, err := parseVideo(r, h.model, h.cfg.Tools)
	if err == nil {
		err = h.acceptsInputs(g)
	}
	if err != nil {
		writeRequestError(w, err, !isMultipart(r))
		return
	}
	rn := run{id: newID(), number: number, req: g}
	// _video_job_from_sampling: size "WxH", seconds round(num_frames / fps) (MiniMax-H3:
	// the resolved frame count over 24 fps, to 6 decimals, project_queued_job_fields).
	seconds := strconv.Itoa(int(math.RoundToEven(float64(g.frames) / float64(g.fps))))
	if g.minimax {
		seconds = formatSeconds(float64(g.frames) / float64(g.fps))
	}
	j := &videoJob{
		ID: rn.id, Object: "video", Model: h.served(), Status: jobQueued, CreatedAt: time.Now().Unix(),
		Size: g.size(), Seconds: seconds, Quality: "standard",
	}
	h.mu.Lock()
	h.jobs[j.ID] = j
	h.order = append(h.order, j.ID)
	snapshot := *j
	h.mu.Unlock()
	if !h.goBackground(func() { h.runVideo(rn, j) }) {
		h.update(j, func(j *videoJob) { j.Status, j.Error = jobFailed, map[string]any{"message": "server is shutting down"} })
		writeError(w, http.StatusServiceUnavailable, "server is shutting down")
		return
	}
	writeJSON(w, http.StatusOK, snapshot)
}

// formatSeconds is _format_video_seconds of SGLang's MiniMax-H3 video adapter.
func formatSeconds(v float64) string {
	if r := math.RoundToEven(v); math.Abs(v-r) < 1e-9 {
		return strconv.Itoa(int(r))
	}
	return strings.TrimRight(strings.TrimRight(strconv.FormatFloat(v, 'f', 6, 64), "0"), ".")
}

func isMultipart(r *http.Request) bool {
	return strings.Contains(strings.ToLower(r.Header.Get("Content-Type")), "multipart/form-data")
}

// runVideo runs one video job in the background and records how it ended. A MiniMax-H3 job
// with n outputs runs n generations, each its own request "<id>:<i>" with seed + i, as SGLang's
// expand_request_outputs splits it (runtime/entrypoints/utils.py).
func (h *Handler) runVideo(rn run, j *videoJob) {
	outputs := max(rn.req.outputs, 1)
	var media [][]byte
	var peakMB, inferS float64
	for i := range outputs {
		one := rn
		if outputs > 1 {
			g := *rn.req
			g.seed += int64(i)
			one.id, one.req = fmt.Sprintf("%s:%d", rn.id, i), &g
		}
		h.logStart(one)
		out, err := h.generate(h.ctx, one)
		switch {
		case errors.Is(err, errCrashed), errors.Is(err, errHung):
			return // the job stays queued: nobody is left to finish it
		case err != nil:
			msg := err.Error()
			if h.ctx.Err() != nil {
				msg = "server shut down during generation"
			}
			h.logf("ERROR", "Video job %s failed: %v", rn.id, err)
			h.update(j, func(j *videoJob) { j.Status, j.Error = jobFailed, map[string]any{"message": msg} })
			return
		}
		h.logDone(one, out)
		h.recordPerf(one, out) // before the job is completed, as SGLang's GPU worker logs it
		media = append(media, out.media[0])
		peakMB = max(peakMB, out.mem.RuntimePeak.PeakReservedMB)
		inferS += round(out.total.Seconds(), 4)
	}
	now := time.Now().Unix()
	h.update(j, func(j *videoJob) {
		j.Status, j.Progress, j.CompletedAt = jobCompleted, 100, &now
		j.PeakMemoryMB, j.InferenceTimeS = &peakMB, &inferS
		j.NumOutputs = &outputs
		j.content = media
	})
}

func (h *Handler) update(j *videoJob, f func(*videoJob)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f(j)
}

// job returns a copy of a job, content included.
func (h *Handler) job(id string) (videoJob, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	j, ok := h.jobs[id]
	if !ok {
		return videoJob{}, false
	}
	return *j, true
}

func (h *Handler) getVideo(w http.ResponseWriter, r *http.Request) {
	j, ok := h.job(r.PathValue("id"))
	if !ok {
		writeError(w, http.StatusNotFound, "Video not found")
		return
	}
	writeJSON(w, http.StatusOK, j)
}

// deleteVideo is SGLang's delete_video: the job is removed and answered as "deleted" (a
// running generation is not aborted: SGLang's TODO).
func (h *Handler) deleteVideo(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	h.mu.Lock()
	j, ok := h.jobs[id]
	var snapshot videoJob
	if ok {
		delete(h.jobs, id)
		h.order = slices.DeleteFunc(h.order, func(o string) bool { return o == id })
		snapshot = *j
	}
	h.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "Video not found")
		return
	}
	snapshot.Status = jobDeleted
	writeJSON(w, http.StatusOK, snapshot)
}

func (h *Handler) listVideos(w http.ResponseWriter, _ *http.Request) {
	h.mu.Lock()
	data := make([]videoJob, 0, len(h.order))
	for _, id := range slices.Backward(h.order) { // SGLang lists newest first (order "desc")
		data = append(data, *h.jobs[id])
	}
	h.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"data": data, "object": "list"})
}

// videoContent is download_video_content: 404 "Generation is still in-progress" until the job
// has ended, 404 "Video variant ... not found" for a failed job or a missing variant.
func (h *Handler) videoContent(w http.ResponseWriter, r *http.Request) {
	j, ok := h.job(r.PathValue("id"))
	if !ok {
		writeError(w, http.StatusNotFound, "Video not found")
		return
	}
	if j.Status != jobCompleted && j.Status != jobFailed {
		writeError(w, http.StatusNotFound, "Generation is still in-progress")
		return
	}
	variant := r.URL.Query().Get("variant")
	k, err := 0, error(nil)
	if variant != "" {
		k, err = strconv.Atoi(variant)
	}
	if err != nil || k < 0 || k >= len(j.content) {
		name := variant
		if name == "" {
			name = "None"
		}
		writeError(w, http.StatusNotFound, fmt.Sprintf("Video variant %s not found", name))
		return
	}
	w.Header().Set("Content-Type", "video/mp4")
	w.Header().Set("Content-Length", strconv.Itoa(len(j.content[k])))
	_, _ = w.Write(j.content[k]) // fails only when the client has gone
}

// writeError answers as FastAPI answers an HTTPException: {"detail": "..."}.
func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"detail": msg})
}

// writeRequestError answers a rejected request as SGLang does: type errors as FastAPI's 422
// {"detail": [{type, loc, msg, input}, ...]}, except in a JSON video body, which SGLang
// validates itself and answers 400 "Invalid request body: <pydantic's text>"
// (video_api.py, create_video); a ValueError of SGLang's as 400 {"detail": "..."}; an
// unreadable MiniMax-H3 material as Starlette's bare 500.
func writeRequestError(w http.ResponseWriter, err error, jsonVideo bool) {
	var inv *invalidFields
	var st *httpStatusError
	var unreadable *errMaterialUnreadable
	switch {
	case errors.As(err, &inv) && jsonVideo:
		writeError(w, http.StatusBadRequest, "Invalid request body: "+inv.pydanticText())
	case errors.As(err, &inv):
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": inv.errors})
	case errors.As(err, &st):
		writeError(w, st.status, st.detail)
	case errors.As(err, &unreadable):
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, "Internal Server Error") // fails only when the client has gone
	default:
		writeError(w, http.StatusBadRequest, err.Error())
	}
}

// writeJSON answers as FastAPI's JSONResponse renders: compact, "<" and "&" unescaped, no
// trailing newline.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))) // fails only when the client has gone
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

// Unwrap lets http.ResponseController and the websocket upgrade (realtime.go) reach the
// connection's own writer, to hijack it.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// newID returns a random UUID version 4, as SGLang's generate_request_id (str(uuid.uuid4()),
// configs/sample/sampling_params.py) names every image and video request.
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	x := hex.EncodeToString(b[:])
	return x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}

// logf writes one server log line, in the shape SGLang's logger uses.
func (h *Handler) logf(level, format string, args ...any) {
	h.writeLog(fmt.Sprintf("[%s] %s %s\n", time.Now().Format("2006-01-02 15:04:05"), level, fmt.Sprintf(format, args...)))
}

// writeLog writes text to the log in one Write, so that concurrent lines never interleave.
func (h *Handler) writeLog(text string) {
	h.logMu.Lock()
	defer h.logMu.Unlock()
	// As with fmt.Fprint* (see .golangci.yml): a log nobody can read has nowhere else to go.
	_, _ = io.WriteString(h.cfg.Log, text)
}

func (h *Handler) logStart(rn run) {
	g := rn.req
	h.logf("INFO", "[%s #%d] %s %s %s", rn.id, rn.number, g.kind, g.size(), describe(g))
}

func (h *Handler) logDone(rn run, out *outcome) {
	h.logf("INFO", "[%s #%d] %s %s done in %.3f s (denoise %d steps, peak reserved %.1f MB)",
		rn.id, rn.number, rn.req.kind, rn.req.size(), out.total.Seconds(), len(out.steps), out.mem.RuntimePeak.PeakReservedMB)
}

func describe(g *genRequest) string {
	s := fmt.Sprintf("steps=%d seed=%d", g.steps, g.seed)
	if g.kind == kindVideo {
		s += fmt.Sprintf(" frames=%d fps=%d audio=%t", g.frames, g.fps, g.audio)
	} else {
		s += fmt.Sprintf(" n=%d format=%s", g.n, g.format)
	}
	if len(g.inputs) > 0 {
		s += fmt.Sprintf(" inputs=%d", len(g.inputs))
	}
	return s
}
