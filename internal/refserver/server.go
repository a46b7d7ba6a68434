package refserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/clock"
	"github.com/diffusion-check/diffusion-check/internal/fault"
	"github.com/diffusion-check/diffusion-check/internal/loadclock"
	"github.com/diffusion-check/diffusion-check/internal/media"
)

// Config configures the reference server. Zero fields take the documented defaults.
type Config struct {
	// Tools are the ffmpeg and ffprobe it encodes and probes media with, as the serve command
	// probed them at its start; the zero value is those on PATH, probed at their first use
	// (media.OnPath).
	Tools media.Tools
	// Addr is the host:port to listen on; default "127.0.0.1:30000" (SGLang's default port).
	Addr string
	// PerfLogDir is where performance.log is appended; empty means no perf log.
	PerfLogDir string
	// StageLogging turns on the per-request performance.log records, as
	// SGLANG_DIFFUSION_STAGE_LOGGING does for SGLang (read it with StageLogging); off, the
	// server writes none, as SGLang writes none.
	StageLogging bool
	// StepMs is the time of one denoise step in milliseconds; default 2.
	StepMs float64
	// LoadMs is the simulated model load before the server is ready, in milliseconds; default 50.
	LoadMs float64
	// HTTPStartMs is the time from all workers ready, where SGLang's launcher logs its
	// `[server-load]` line, to the HTTP server's start (uvicorn's import and lifespan), in
	// milliseconds.
	HTTPStartMs float64
	// WarmupMs is how long the server warm-up after the port is live lasts, in milliseconds
	// (SGLang's default warmup_mode "server": /health answers 503 meanwhile); 0 means one
	// warm-up step.
	WarmupMs float64
	// Model is the model the server loads (SGLang's --model-path); default
	// "diffusion-check/reference".
	Model string
	// LoraPath is SGLang's --lora-path: the LoRA adapter the server starts with, loaded as
	// "default" and merged (lora.go); empty: none.
	LoraPath string
	// ModelID is SGLang's --model-id: the id it resolves the model's config by, which
	// /v1/models and the responses name (served_model_name defaults to model_id, else
	// model_path: server_args.py); empty names Model.
	ModelID string
	// TaskType is the task type /v1/models reports (SGLang's ModelTaskType name: T2I, T2V,
	// TI2V, …); empty reports T2I and takes every input, as the reference model always has.
	// A task type that takes no image input (T2V, T2I) refuses an input_reference as SGLang
	// does (models.go).
	TaskType string
	// BatchingMaxSize is SGLang's --batching-max-size: up to this many compatible image
	// requests run as one batch (batching.go); 0 or 1 merges none. BatchingDelayMs is
	// --batching-delay-ms, how long a smaller batch waits for more.
	BatchingMaxSize int
	BatchingDelayMs float64
	// PerfLag delays each perf record until after its response (a test of the runner's wait);
	// zero writes it before the response, as SGLang does.
	PerfLag time.Duration
	// Timing is where the perf record's durations come from (timing.go); default measured.
	Timing Timing
	// Faults are the misbehaviours to show; the zero value is a healthy server.
	Faults fault.Set
	// Log receives the server's log (the runner captures stdout/stderr); nil discards it.
	Log io.Writer
	// Exit ends the process for the crash-at fault; nil means os.Exit. Tests pass a fake: when
	// it returns, the handler behaves as a dead process (connections dropped) and Serve returns
	// ErrCrashed.
	Exit func(code int)
}

// Defaults of Config.
const (
	DefaultAddr   = "127.0.0.1:30000"
	DefaultStepMs = 2.0
	DefaultLoadMs = 50.0
	DefaultModel  = "diffusion-check/reference"
)

func (c Config) withDefaults() Config {
	if c.Addr == "" {
		c.Addr = DefaultAddr
	}
	if c.StepMs == 0 {
		c.StepMs = DefaultStepMs
	}
	if c.LoadMs == 0 {
		c.LoadMs = DefaultLoadMs
	}
	if c.Model == "" {
		c.Model = DefaultModel
	}
	if c.Timing == "" {
		c.Timing = DefaultTiming
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	if c.Exit == nil {
		c.Exit = os.Exit
	}
	return c
}

// Validate reports every bad field at once.
func (c Config) Validate() error {
	var errs []error
	if c.StepMs < 0 {
		errs = append(errs, fmt.Errorf("step-ms: must be ≥ 0, got %g", c.StepMs))
	}
	if c.LoadMs < 0 {
		errs = append(errs, fmt.Errorf("load-ms: must be ≥ 0, got %g", c.LoadMs))
	}
	if c.HTTPStartMs < 0 {
		errs = append(errs, fmt.Errorf("http-start-ms: must be ≥ 0, got %g", c.HTTPStartMs))
	}
	if c.PerfLag < 0 {
		errs = append(errs, fmt.Errorf("perf-lag: must be ≥ 0, got %s", c.PerfLag))
	}
	if c.Timing != "" {
		if err := new(Timing).Set(string(c.Timing)); err != nil {
			errs = append(errs, fmt.Errorf("timing: %w", err))
		}
	}
	return errors.Join(errs...)
}

var (
	// ErrStartup is returned (wrapped) by Serve when the fail-startup fault stops the server
	// before it is ready.
	ErrStartup = errors.New("model load failed")
	// ErrCrashed is returned (wrapped) by Serve after the crash-at fault called a Config.Exit
	// that returned.
	ErrCrashed = errors.New("server crashed")
)

// shutdownTimeout bounds the wait for in-flight requests on shutdown.
const shutdownTimeout = 5 * time.Second

// Serve runs the server until ctx is done, then shuts it down gracefully (in-flight requests
// get shutdownTimeout to finish; hung ones are released). Like SGLang under uvicorn it logs its
// model load, sleeps LoadMs, logs SGLang's launcher line `[server-load]
// workers_ready_monotonic_ns=N` (every worker ready; the no-load-line fault leaves it out),
// sleeps HTTPStartMs, logs "Application startup complete." (the lifespan has run),
// only then binds the port and logs "Uvicorn running on ...", and then warms up: one
// generation that writes no perf record and counts as no request, during which /health
// answers 503 and other requests wait. With the fail-startup fault it logs a traceback and
// returns an ErrStartup error without listening.
func Serve(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	cfg = cfg.withDefaults()
	if err := load(ctx, cfg); err != nil {
		return err
	}
	if err := clock.Sleep(ctx, time.Duration(cfg.HTTPStartMs*float64(time.Millisecond))); err != nil {
		return err
	}
	h := newHandler(cfg)
	h.writeLog(fmt.Sprintf("INFO:     Started server process [%d]\nINFO:     Waiting for application startup.\n"+
		"INFO:     Application startup complete.\n", os.Getpid()))
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", cfg.Addr)
	if err != nil {
		h.Close()
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	return serve(ctx, h, ln)
}

// load logs the model load and sleeps LoadMs, or fails as fail-startup says.
func load(ctx context.Context, cfg Config) error {
	logLine := func(level, msg string) {
		fmt.Fprintf(cfg.Log, "[%s] %s %s\n", time.Now().Format("2006-01-02 15:04:05"), level, msg)
	}
	faults := cfg.Faults.String()
	if faults == "" {
		faults = "none"
	}
	logLine("INFO", fmt.Sprintf("server_args: model_path=%s addr=%s step_ms=%g load_ms=%g timing=%s perf_log_dir=%q faults=%s",
		cfg.Model, cfg.Addr, cfg.StepMs, cfg.LoadMs, cfg.Timing, cfg.PerfLogDir, faults))
	logLine("INFO", fmt.Sprintf("Loading pipeline %s (reference model, 1 GPU) ...", cfg.Model))
	if err := floodLog(cfg.Log, cfg.Faults.LogFloodMiB, cfg.Faults.LogLineMiB); err != nil {
		return err
	}
	if cfg.Faults.FailStartup {
		fmt.Fprint(cfg.Log, "Traceback (most recent call last):\n"+
			"  File \"/sgl-workspace/sglang/python/sglang/multimodal_gen/runtime/launch_server.py\", line 88, in launch_server\n"+
			"    pipeline = build_pipeline(server_args)\n"+
			"  File \"/sgl-workspace/sglang/python/sglang/multimodal_gen/runtime/loader/component_loader.py\", line 212, in load_weights\n"+
			"    param.data.copy_(loaded_weight)\n"+
			"RuntimeError: CUDA out of memory while loading weights (fault fail-startup)\n")
		return fmt.Errorf("%w: %s: CUDA out of memory while loading weights (fault fail-startup)", ErrStartup, cfg.Model)
	}
	start := time.Now()
	if err := clock.Sleep(ctx, time.Duration(cfg.LoadMs*float64(time.Millisecond))); err != nil {
		return err
	}
	logLine("INFO", fmt.Sprintf("Pipeline loaded in %.2f s, peak reserved %.1f MB, peak allocated %.1f MB",
		time.Since(start).Seconds(), loadReservedMiB, loadAllocatedMiB))
	// SGLang's launcher logs the line once every worker sent "ready", before it starts the HTTP
	// server (launch_server.py launch_server); off Linux there is no CLOCK_MONOTONIC to log.
	if ns, ok := loadclock.Now(); ok && !cfg.Faults.NoLoadLine {
		logLine("INFO", loadclock.Line(ns))
	}
	return nil
}

// warmup is SGLang's synthetic server warm-up (http_server.py, _run_server_warmup_after_http_live):
// once the port is live, one generation through the pipeline that no client sent, so it counts
// as no request and writes no perf record (gpu_worker.py skips req.is_warmup); then "The server
// is fired up and ready to roll!" and /health turns 200. It lasts one warm-up step: a client
// that sends its first request on the startup marker (before /health says 200) waits for it,
// and a short one keeps that wait out of the first request's timings.
func (h *Handler) warmup() {
	defer h.warmed()
	d := h.stepDuration(warmupFactor)
	if h.cfg.WarmupMs > 0 {
		d = time.Duration(h.cfg.WarmupMs * float64(time.Millisecond))
	}
	if err := clock.Sleep(h.ctx, d); err != nil {
		return
	}
	select {
	case <-h.stopping:
		return
	default:
	}
	h.logf("INFO", "The server is fired up and ready to roll!")
}

// serve runs the HTTP server on ln until ctx is done or a crash fault happens.
func serve(ctx context.Context, h *Handler, ln net.Listener) error {
	cfg := h.cfg
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	addr := ln.Addr().String()
	h.writeLog(fmt.Sprintf("INFO:     Uvicorn running on http://%s (Press CTRL+C to quit)\n", addr))
	h.goBackground(h.warmup)

	var result error
	select {
	case <-ctx.Done():
	case <-h.Crashed():
		result = fmt.Errorf("%w (fault crash-at=%d)", ErrCrashed, cfg.Faults.CrashAt)
	case err := <-errc:
		h.Close()
		return fmt.Errorf("serve on %s: %w", addr, err)
	}
	h.writeLog("INFO:     Shutting down\n")
	h.stop() // release hung requests first, so that Shutdown waits only for healthy ones
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		// Shutdown has closed the listener already; Close only drops the connections that
		// outlived the timeout, and its error could say no more than Shutdown's.
		_ = srv.Close()
	}
	h.Close()
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) && result == nil {
		result = fmt.Errorf("serve on %s: %w", addr, err)
	}
	h.writeLog("INFO:     Application shutdown complete.\n")
	return result
}

// floodLog writes the log-flood and log-line faults' output: floodMiB of 1 KiB lines (a
// server stuck printing a warning per tensor) and one line of lineMiB without a break (a
// progress bar redrawn with carriage returns), to test the harness's cap on server logs.
func floodLog(w io.Writer, floodMiB, lineMiB float64) error {
	if lineMiB > 0 {
		chunk := bytes.Repeat([]byte("="), 1<<20)
		for left := int64(lineMiB * (1 << 20)); left > 0; left -= int64(len(chunk)) {
			if _, err := w.Write(chunk[:min(int64(len(chunk)), left)]); err != nil {
				return err
			}
		}
		if _, err := io.WriteString(w, " (fault log-line)\n"); err != nil {
			return err
		}
	}
	if floodMiB <= 0 {
		return nil
	}
	const lineLen = 1 << 10
	var block bytes.Buffer
	for i := 0; block.Len() < 1<<20; i++ {
		l := fmt.Sprintf("WARNING flood line %d (fault log-flood) ", i)
		block.WriteString(l + strings.Repeat("-", lineLen-len(l)-1) + "\n")
	}
	for left := int64(floodMiB * (1 << 20)); left > 0; left -= int64(block.Len()) {
		if _, err := w.Write(block.Bytes()[:min(int64(block.Len()), left)]); err != nil {
			return err
		}
	}
	return nil
}
