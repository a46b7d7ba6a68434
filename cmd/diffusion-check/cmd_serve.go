package main

import (
	"context"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/diffusion-check/diffusion-check/internal/fault"
	"github.com/diffusion-check/diffusion-check/internal/refserver"
	"github.com/diffusion-check/diffusion-check/internal/sglangenv"
)

func serveCmd(ctx context.Context, e env, args []string) (int, error) {
	fs := newFlags("serve", e)
	// SGLang writes performance.log records only with SGLANG_DIFFUSION_STAGE_LOGGING on
	// (managers/gpu_worker.py); the runner sets it for every server it starts.
	cfg := refserver.Config{Log: e.stderr, Exit: os.Exit, StageLogging: sglangenv.Bool(e.getenv(sglangenv.StageLogging))}
	fs.StringVar(&cfg.Addr, "addr", "127.0.0.1:30000", "listen address HOST:PORT")
	fs.StringVar(&cfg.PerfLogDir, "perf-log-dir", e.getenv(sglangenv.PerfLogDir), "folder of performance.log (default $SGLANG_PERF_LOG_DIR; empty: none)")
	fs.Float64Var(&cfg.StepMs, "step-ms", 2, "time of one denoise step in ms")
	fs.Float64Var(&cfg.LoadMs, "load-ms", 50, "simulated model load time in ms")
	fs.Float64Var(&cfg.HTTPStartMs, "http-start-ms", 0, "time from all workers ready (the [server-load] line) to the HTTP server's start, in ms")
	fs.Float64Var(&cfg.WarmupMs, "warmup-ms", 0, "server warm-up after the port is live, in ms, while /health answers 503 (0: one warm-up step)")
	fs.StringVar(&cfg.Model, "model", "diffusion-check/reference", "model id to report; MiniMaxAI/MiniMax-H3 validates video requests as SGLang's MiniMax-H3 does")
	fs.StringVar(&cfg.LoraPath, "lora-path", "", "the LoRA adapter to start with, loaded as \"default\" and merged, as SGLang's --lora-path")
	fs.StringVar(&cfg.ModelID, "model-id", "", "the model id /v1/models and the responses name, as SGLang's --model-id (empty: --model)")
	fs.StringVar(&cfg.TaskType, "task-type", "",
		"task type /v1/models reports (T2I, T2V, TI2V, …); a T2V or T2I model refuses an input_reference with 400 as SGLang does (empty: T2I, every input taken)")
	fs.IntVar(&cfg.BatchingMaxSize, "batching-max-size", 1,
		"compatible image requests merged into one batch, as SGLang's --batching-max-size (1: none merged)")
	fs.Float64Var(&cfg.BatchingDelayMs, "batching-delay-ms", 0,
		"how long a batch waits for more requests before it runs smaller, in ms, as SGLang's --batching-delay-ms")
	fs.DurationVar(&cfg.PerfLag, "perf-lag", 0, "delay before a request's performance.log record is written")
	cfg.Timing = refserver.DefaultTiming
	fs.Var(&cfg.Timing, "timing",
		"where the perf record's durations come from: measured (the clock) or computed (the planned durations: the same on any machine under any load)")
	fs.Var(&cfg.Faults, "fault", "inject a fault `SPEC` (repeatable): "+strings.Join(fault.Known(), ", "))
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if fs.NArg() > 0 {
		return 0, usagef("unexpected arguments %q", fs.Args())
	}
	if err := checkAddr(cfg.Addr); err != nil {
		return 0, err
	}
	// SGLang's ServerArgs._validate_batching refuses the same.
	if cfg.BatchingMaxSize < 1 {
		return 0, usagef("--batching-max-size %d: must be >= 1", cfg.BatchingMaxSize)
	}
	if cfg.BatchingDelayMs < 0 {
		return 0, usagef("--batching-delay-ms %v: must be >= 0", cfg.BatchingDelayMs)
	}
	var err error
	if cfg.Tools, err = inheritMediaTools(ctx, e, serveEncoders...); err != nil {
		return 0, err
	}
	if err := refserver.Serve(ctx, cfg); err != nil {
		return 0, err
	}
	return exitOK, nil
}

// checkAddr refuses a listen address that cannot be one (a usage error, exit 2) before the
// server starts: HOST:PORT with an IP or a name and a port from 0 to 65535.
func checkAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("--addr %q: want HOST:PORT: %v", addr, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return usagef("--addr %q: port %q is not a number from 0 to 65535", addr, port)
	}
	if host != "" && net.ParseIP(host) == nil && strings.Trim(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") != "" {
		return usagef("--addr %q: host %q is neither an IP address nor a host name", addr, host)
	}
	if ip4 := strings.Count(host, "."); ip4 == 3 && net.ParseIP(host) == nil && strings.Trim(host, "0123456789.") == "" {
		return usagef("--addr %q: %q is not an IPv4 address", addr, host)
	}
	return nil
}
