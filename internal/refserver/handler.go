package refserver

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/media"
)

// Handler is the reference server's HTTP API (docs/sglang-compat.md §2). NewHandler makes one; Serve wraps it in
// a listening server. Close stops its background work.
type Handler struct {
	cfg    Config
	mux    *http.ServeMux
	commit string

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

// NewHandler returns the API of a reference server with cfg (defaults applied for zero fields).
// The caller must Close it. Use Serve for the whole server: startup log, fail-startup fault,
// listening and graceful shutdown.
func NewHandler(cfg Config) *Handler {
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	h := &Handler{
		cfg: cfg, commit: commitHash(), ctx: ctx, cancel: cancel,
		stopping: make(chan struct{}), crashed: make(chan struct{}),
		jobs: map[string]*videoJob{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", h.health)
	mux.HandleFunc("GET /v1/models", h.models)
	mux.HandleFunc("POST /v1/images/generations", h.images(parseGeneration))
	mux.HandleFunc("POST /v1/images/edits", h.images(parseEdit))
	mux.HandleFunc("POST /v1/videos", h.createVideo)
	mux.HandleFunc("GET /v1/videos", h.listVideos)
	mux.HandleFunc("GET /v1/videos/{id}", h.getVideo)
	mux.HandleFunc("GET /v1/videos/{id}/content", h.videoContent)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path))
	})
	h.mux = mux
	return h
}

// ServeHTTP serves the API and writes an access-log line per request (polls excepted). After
// a crash fault (with a cfg.Exit that returned) every request is dropped, as by a dead process.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.isCrashed() {
		panic(http.ErrAbortHandler)
	}
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	h.mux.ServeHTTP(rec, r)
	if r.Method != http.MethodGet || r.URL.Path == "/v1/models" {
		h.writeLog(fmt.Sprintf("INFO:     %s - \"%s %s %s\" %d %s\n", r.RemoteAddr, r.Method, r.URL.RequestURI(), r.Proto, rec.status, http.StatusText(rec.status)))
	}
}

// Close releases hung requests, aborts running generations, writes the perf records still
// waiting for their lag and waits for all background goroutines. It is safe to call twice.
func (h *Handler) Close() error {
	h.stop()
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.cancel()
	h.wg.Wait()
	return nil
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

func (h *Handler) health(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, "OK\n")
}

func (h *Handler) models(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data": []map[string]any{{
			"id": h.cfg.Model, "object": "model", "created": 0, "owned_by": "diffusion-check",
			"root": h.cfg.Model, "num_gpus": 1, "task_type": "T2I",
		}},
	})
}

type imageData struct {
	B64JSON string `json:"b64_json"`
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
func (h *Handler) images(parse func(*http.Request) (*genRequest, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		number := h.next()
		g, err := parse(r)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
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

		rn := run{id: newID("img"), number: number, req: g}
		h.logStart(rn)
		out, err := h.generate(ctx, rn)
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
		h.schedulePerf(rn, out)
		resp := imageResponse{ID: rn.id, Created: time.Now().Unix(), PeakMemoryMB: out.mem.RuntimePeak.PeakReservedMB,
			InferenceTimeS: round(out.total.Seconds(), 4)}
		for _, m := range out.media {
			resp.Data = append(resp.Data, imageData{B64JSON: base64.StdEncoding.EncodeToString(m)})
		}
		writeJSON(w, http.StatusOK, resp)
	}
}

func (h *Handler) webpAvailable() error {
	h.webpOnce.Do(func() {
		ok, err := media.HasEncoder(h.ctx, "libwebp")
		switch {
		case err != nil:
			h.webpErr = fmt.Errorf("not available: %w", err)
		case !ok:
			h.webpErr = errors.New("not available: this ffmpeg has no libwebp encoder; ask for png or jpeg")
		}
	})
	return h.webpErr
}

// videoJob is a video generation job as /v1/videos shows it.
type videoJob struct {
	ID             string    `json:"id"`
	Object         string    `json:"object"`
	Model          string    `json:"model"`
	Status         string    `json:"status"`
	Progress       int       `json:"progress"`
	CreatedAt      int64     `json:"created_at"`
	CompletedAt    *int64    `json:"completed_at,omitempty"`
	Prompt         string    `json:"prompt"`
	Size           string    `json:"size"`
	Seconds        string    `json:"seconds"`
	FPS            int       `json:"fps"`
	NumFrames      int       `json:"num_frames"`
	GenerateAudio  bool      `json:"generate_audio"`
	Error          *apiError `json:"error,omitempty"`
	PeakMemoryMB   *float64  `json:"peak_memory_mb,omitempty"`
	InferenceTimeS *float64  `json:"inference_time_s,omitempty"`

	content []byte
}

func (h *Handler) createVideo(w http.ResponseWriter, r *http.Request) {
	number := h.next()
	g, err := parseVideo(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	rn := run{id: newID("video"), number: number, req: g}
	j := &videoJob{
		ID: rn.id, Object: "video", Model: h.cfg.Model, Status: "queued", CreatedAt: time.Now().Unix(),
		Prompt: g.prompt, Size: g.size(), Seconds: strconv.FormatFloat(g.seconds, 'f', -1, 64),
		FPS: g.fps, NumFrames: g.frames, GenerateAudio: g.audio,
	}
	h.mu.Lock()
	h.jobs[j.ID] = j
	h.order = append(h.order, j.ID)
	snapshot := *j
	h.mu.Unlock()
	if !h.goBackground(func() { h.runVideo(rn, j) }) {
		h.update(j, func(j *videoJob) {
			j.Status, j.Error = "failed", &apiError{Message: "server is shutting down", Type: "server_error"}
		})
		writeError(w, http.StatusServiceUnavailable, "server is shutting down")
		return
	}
	writeJSON(w, http.StatusOK, snapshot)
}

// runVideo runs one video job in the background and records how it ended.
func (h *Handler) runVideo(rn run, j *videoJob) {
	h.update(j, func(j *videoJob) { j.Status = "in_progress" })
	h.logStart(rn)
	rn.progress = func(p int) { h.update(j, func(j *videoJob) { j.Progress = p }) }
	out, err := h.generate(h.ctx, rn)
	switch {
	case errors.Is(err, errCrashed), errors.Is(err, errHung):
		return // the job stays in_progress: nobody is left to finish it
	case err != nil:
		msg := err.Error()
		if h.ctx.Err() != nil {
			msg = "server shut down during generation"
		}
		h.logf("ERROR", "[%s #%d] %v", rn.id, rn.number, err)
		h.update(j, func(j *videoJob) { j.Status, j.Error = "failed", &apiError{Message: msg, Type: "server_error"} })
		return
	}
	h.logDone(rn, out)
	h.schedulePerf(rn, out)
	now := time.Now().Unix()
	peakMB, inferS := out.mem.RuntimePeak.PeakReservedMB, round(out.total.Seconds(), 4)
	h.update(j, func(j *videoJob) {
		j.Status, j.Progress, j.CompletedAt = "completed", 100, &now
		j.PeakMemoryMB, j.InferenceTimeS = &peakMB, &inferS
		j.content = out.media[0]
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
		writeError(w, http.StatusNotFound, fmt.Sprintf("video %s not found", r.PathValue("id")))
		return
	}
	writeJSON(w, http.StatusOK, j)
}

func (h *Handler) listVideos(w http.ResponseWriter, _ *http.Request) {
	h.mu.Lock()
	data := make([]videoJob, 0, len(h.order))
	for _, id := range h.order {
		data = append(data, *h.jobs[id])
	}
	h.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

func (h *Handler) videoContent(w http.ResponseWriter, r *http.Request) {
	j, ok := h.job(r.PathValue("id"))
	switch {
	case !ok:
		writeError(w, http.StatusNotFound, fmt.Sprintf("video %s not found", r.PathValue("id")))
	case j.Status != "completed":
		writeError(w, http.StatusNotFound, fmt.Sprintf("video %s is not ready (status %s)", j.ID, j.Status))
	default:
		w.Header().Set("Content-Type", "video/mp4")
		w.Header().Set("Content-Length", strconv.Itoa(len(j.content)))
		w.Write(j.content)
	}
}

// apiError is the OpenAI-style error object.
type apiError struct {
	Message string `json:"message"`
	Type    string `json:"type,omitempty"`
	Code    int    `json:"code,omitempty"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	typ := "invalid_request_error"
	if status >= 500 {
		typ = "server_error"
	}
	writeJSON(w, status, map[string]any{"error": apiError{Message: msg, Type: typ, Code: status}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// newID returns a random id such as "video_5f0c...". Ids need to be unique, not reproducible.
func newID(prefix string) string {
	var b [12]byte
	rand.Read(b[:])
	return prefix + "_" + hex.EncodeToString(b[:])
}

// logf writes one server log line, in the shape SGLang's logger uses.
func (h *Handler) logf(level, format string, args ...any) {
	h.writeLog(fmt.Sprintf("[%s] %s %s\n", time.Now().Format("2006-01-02 15:04:05"), level, fmt.Sprintf(format, args...)))
}

// writeLog writes text to the log in one Write, so that concurrent lines never interleave.
func (h *Handler) writeLog(text string) {
	h.logMu.Lock()
	defer h.logMu.Unlock()
	io.WriteString(h.cfg.Log, text)
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
