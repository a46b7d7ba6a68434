package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/memory"
	"github.com/diffusion-check/diffusion-check/internal/proc"
	"github.com/diffusion-check/diffusion-check/runner/suite"
)

// fatalPatterns are log lines by which a server announces that it is dying, even before its
// process exits (docs/sglang-compat.md §1).
var fatalPatterns = []string{
	"Fatal Python error:",
	"Segmentation fault",
	"Aborted (core dumped)",
	"terminate called after throwing",
}

// tailLines is how many log lines a server keeps for failure details.
const tailLines = 40

// server is one running server process under test, in its own process group.
type server struct {
	spec       *suite.Server
	cmd        *exec.Cmd
	port       int
	baseURL    string
	logPath    string
	perfLogDir string
	log        *logWatch
	perf       *perfLog
	started    time.Time

	guard    *proc.Guard   // kills the process group if the run dies before stop
	exited   chan struct{} // closed when the process has exited
	exitErr  error         // set before exited is closed
	stopOnce sync.Once

	// mem samples the process tree's memory (nil without a sampler); loadWin is open from
	// launch to ready; memNote says why there is no session when starting one failed.
	mem     memory.Session
	loadWin memory.Window
	memNote string
}

// serverEnv is what the runner knows about where and how to start servers.
type serverEnv struct {
	dir        string    // folder for logs and perf logs of this server start
	suiteDir   string    // default working directory
	executable string    // diffusion-check itself, for builtin servers
	environ    []string  // base environment of server processes
	mirror     io.Writer // receives every log line as it is written; nil: none
}

// argv returns the command line of a server spec; builtin servers run `diffusion-check serve`.
func argv(spec *suite.Server, executable string) ([]string, error) {
	if spec.Builtin == nil {
		return spec.Command, nil
	}
	if executable == "" {
		return nil, errors.New("builtin server: the path of the diffusion-check executable is unknown")
	}
	b := spec.Builtin
	args := []string{executable, "serve", "--addr", "127.0.0.1:{port}",
		"--step-ms", strconv.FormatFloat(b.StepMs, 'f', -1, 64),
		"--load-ms", strconv.FormatFloat(b.LoadMs, 'f', -1, 64),
		"--model", b.Model,
		"--perf-lag", b.Lag.String(),
	}
	if b.Timing != "" {
		args = append(args, "--timing", b.Timing)
	}
	for _, f := range b.Faults {
		args = append(args, "--fault", f)
	}
	return args, nil
}

// freePort asks the kernel for a free TCP port on the loopback interface.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close() //nolint:errcheck // only the port number was wanted of it
	return l.Addr().(*net.TCPAddr).Port, nil
}

// StageLoggingEnv turns on SGLang's per-request stage timers and its performance.log records.
const StageLoggingEnv = "SGLANG_DIFFUSION_STAGE_LOGGING"

// startServer launches a server process; it does not wait for readiness.
func startServer(spec *suite.Server, env serverEnv) (*server, error) {
	args, err := argv(spec, env.executable)
	if err != nil {
		return nil, err
	}
	if len(args) == 0 {
		return nil, errors.New("empty command")
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	fill := func(s string) string { return strings.ReplaceAll(s, "{port}", strconv.Itoa(port)) }
	filled := make([]string, len(args))
	for i, a := range args {
		filled[i] = fill(a)
	}
	// Absolute: the server runs in its own working directory.
	perfDir, err := filepath.Abs(filepath.Join(env.dir, "perf"))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(perfDir, 0o755); err != nil {
		return nil, err
	}
	logPath := filepath.Join(env.dir, "server.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	// Its own process group, killed by the kernel if the run dies (Pdeathsig), and by a
	// guard (below) together with everything else in the group.
	cmd := proc.Group(filled[0], filled[1:]...)
	cmd.Dir = spec.Dir
	if cmd.Dir == "" {
		cmd.Dir = env.suiteDir
	}
	cmd.Env = ServerEnviron(env.environ)
	// SGLang writes a performance.log record only with stage logging on
	// (gpu_worker._execute_forward_common); its own harness sets both for every server
	// (test/server/test_server_utils.py). A suite's env, appended after, may override it.
	cmd.Env = append(cmd.Env, "SGLANG_PERF_LOG_DIR="+perfDir, StageLoggingEnv+"=1", "PYTHONUNBUFFERED=1")
	for k, v := range spec.Env {
		cmd.Env = append(cmd.Env, k+"="+fill(v))
	}
	lw := newLogWatch(logFile, spec.Ready.LogMarker)
	lw.mirror = env.mirror
	cmd.Stdout, cmd.Stderr = lw, lw
	// Orphaned grandchildren may keep the log pipe open; do not wait for them forever.
	cmd.WaitDelay = 2 * time.Second
	s := &server{
		spec: spec, cmd: cmd, port: port,
		baseURL:    "http://127.0.0.1:" + strconv.Itoa(port),
		logPath:    logPath,
		perfLogDir: perfDir,
		log:        lw,
		perf:       newPerfLog(filepath.Join(perfDir, "performance.log")),
		exited:     make(chan struct{}),
	}
	s.started = time.Now()
	if err := cmd.Start(); err != nil {
		_ = logFile.Close() // nothing was written to it yet
		return nil, fmt.Errorf("start %s: %w", filled[0], err)
	}
	if s.guard, err = proc.StartGuard(cmd.Process.Pid); err != nil {
		// Without a guard a SIGKILL of the run would leave the server's children running.
		// The guard's error is the one to return; these only undo the start.
		_ = proc.KillGroup(cmd)
		_ = cmd.Wait()
		_ = logFile.Close()
		return nil, fmt.Errorf("start %s: %w", filled[0], err)
	}
	go func() {
		s.exitErr = cmd.Wait()
		if s.exitErr == nil {
			s.exitErr = errors.New("exit status 0")
		}
		lw.close()
		close(s.exited)
	}()
	return s, nil
}

// errNotReady wraps every readiness failure.
var errNotReady = errors.New("server not ready")

// waitReady blocks until the server is ready, the process exits, or the start timeout
// passes. Ready means signalled (the log marker appeared, or the health endpoint answered
// 200) and accepting connections on its port: uvicorn logs "Application startup complete."
// before it binds its socket, so the marker alone races the bind and a first request sent
// on it is refused.
func (s *server) waitReady(ctx context.Context, hc *http.Client) error {
	deadline := time.NewTimer(s.spec.StartTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	health := s.spec.Ready.Health
	marker := s.log.ready
	var signalled string // what said ready: the marker or the health endpoint
	var lastHealth time.Time
	for {
		select {
		case <-marker:
			signalled, marker = "log marker "+strconv.Quote(s.spec.Ready.LogMarker), nil
		case <-s.exited:
			return fmt.Errorf("%w: process exited during startup (%w) after %s", errNotReady, s.exitErr, time.Since(s.started).Round(time.Millisecond))
		case <-deadline.C:
			if signalled != "" {
				return fmt.Errorf("%w: %s seen, but 127.0.0.1:%d did not accept connections within %s", errNotReady, signalled, s.port, s.spec.StartTimeout)
			}
			return fmt.Errorf("%w: not ready within %s (no %q in the log, no 200 from %s)", errNotReady, s.spec.StartTimeout, s.spec.Ready.LogMarker, health)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			if line := s.log.fatalLine(); line != "" {
				return fmt.Errorf("%w: crashed during startup: %s", errNotReady, line)
			}
			if signalled == "" && health != "" && health != "-" && time.Since(lastHealth) >= healthPoll {
				lastHealth = time.Now()
				if s.healthy(ctx, hc, health) {
					signalled = "200 from " + health
				}
			}
		}
		if signalled != "" && s.accepting() {
			return nil
		}
	}
}

func (s *server) healthy(ctx context.Context, hc *http.Client, path string) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.baseURL+path, nil)
	if err != nil {
		return false
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false
	}
	// Drained so that the connection can be reused; only the status matters here.
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// dead reports why the server can no longer serve, or "" while it is alive.
func (s *server) dead() string {
	select {
	case <-s.exited:
		return fmt.Sprintf("server process exited (%v)", s.exitErr)
	default:
	}
	if line := s.log.fatalLine(); line != "" {
		return "server log shows a crash: " + line
	}
	return ""
}

// crashCause is dead's reason in a few words, for Check.Cause: what ("server crashed")
// with the exit code or signal ("server crashed, exit 139") once the process has exited.
func (s *server) crashCause(what string) string {
	select {
	case <-s.exited:
	default:
		return what
	}
	var ee *exec.ExitError
	if !errors.As(s.exitErr, &ee) {
		return what
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return what + ", " + ws.Signal().String()
	}
	return fmt.Sprintf("%s, exit %d", what, ee.ExitCode())
}

// settle gives a process that is going down a moment to finish exiting, so that a request
// that failed because the server died is reported as exactly that.
func (s *server) settle(d time.Duration) {
	select {
	case <-s.exited:
	case <-time.After(d):
	}
}

// stop ends the process group: SIGTERM, then SIGKILL after the grace period. Any process left
// in the group after the leader exits is killed too, so nothing outlives the run.
func (s *server) stop() { s.stopOnce.Do(s.kill) }

func (s *server) kill() {
	select {
	case <-s.exited:
	default:
		_ = proc.Terminate(s.cmd)
		select {
		case <-s.exited:
		case <-time.After(s.spec.StopGrace):
		}
	}
	_ = proc.KillGroup(s.cmd)
	<-s.exited
	// Released only now: until the group is gone, a run killed mid-stop leaves it to the guard.
	_ = s.guard.Release()
	if s.mem != nil {
		s.mem.Stop()
	}
}

// ServerEnviron is the environment a server process starts from: environ without the
// credentials of GitHub and of the Actions runner, which a server (code the suite names, so
// possibly a pull request's) has no use for and must not be able to read or leak: the
// tokens (GITHUB_TOKEN, GH_TOKEN, GH_ENTERPRISE_TOKEN, GITHUB_ENTERPRISE_TOKEN), every
// action input (INPUT_*, which holds github_token), and every runner-internal ACTIONS_*
// variable (ACTIONS_RUNTIME_TOKEN, ACTIONS_ID_TOKEN_REQUEST_URL/TOKEN, ACTIONS_CACHE_URL,
// ACTIONS_RESULTS_URL, ...). The rest (PATH, HOME, CUDA_*, HF_TOKEN for model downloads, the
// non-secret GITHUB_* context) passes; the suite's env is added on top by the caller.
func ServerEnviron(environ []string) []string {
	var out []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "INPUT_"), strings.HasPrefix(k, "ACTIONS_"):
			continue
		case k == "GITHUB_TOKEN", k == "GH_TOKEN", k == "GH_ENTERPRISE_TOKEN", k == "GITHUB_ENTERPRISE_TOKEN":
			continue
		}
		out = append(out, kv)
	}
	return out
}

// logWatch writes the server's output to its log file while watching it line by line for
// the readiness marker and crash patterns, and keeps the last lines for failure details.
type logWatch struct {
	mu   sync.Mutex
	file io.WriteCloser
	// dropped counts the output bytes that could not be written to the log file (a full
	// disk); writeErr is the first such error. The output is still read and watched: a
	// server whose output stops being read blocks, or dies of SIGPIPE.
	dropped  int64
	writeErr error
	marker   string
	ready    chan struct{}
	seen     bool
	fatal    string
	part     []byte
	tail     []string
	closed   bool
	mirror   io.Writer // nil: lines go only to the file
}

func newLogWatch(f io.WriteCloser, marker string) *logWatch {
	return &logWatch{file: f, marker: marker, ready: make(chan struct{})}
}

// Write never fails: what the log file refuses is counted (unsaved) and the rest of the
// watching goes on.
func (l *logWatch) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		if n, err := l.file.Write(p); err != nil {
			l.dropped += int64(len(p) - n)
			if l.writeErr == nil {
				l.writeErr = err
			}
		}
	}
	l.part = append(l.part, p...)
	for {
		i := bytes.IndexByte(l.part, '\n')
		if i < 0 {
			break
		}
		l.line(string(bytes.TrimRight(l.part[:i], "\r")))
		l.part = l.part[i+1:]
	}
	// A line that never ends must not grow without bound.
	if len(l.part) > 64<<10 {
		l.line(string(l.part))
		l.part = l.part[:0]
	}
	return len(p), nil
}

func (l *logWatch) line(s string) {
	if len(l.tail) == tailLines {
		copy(l.tail, l.tail[1:])
		l.tail = l.tail[:tailLines-1]
	}
	l.tail = append(l.tail, s)
	if l.mirror != nil {
		// Best effort: the file holds the log whatever happens to the copy. The prefix keeps
		// a server's line from reading as a workflow command ("::...") in an Actions log.
		_, _ = fmt.Fprintf(l.mirror, "│ %s\n", s)
	}
	if !l.seen && l.marker != "" && strings.Contains(s, l.marker) {
		l.seen = true
		close(l.ready)
	}
	if l.fatal == "" {
		for _, p := range fatalPatterns {
			if strings.Contains(s, p) {
				l.fatal = strings.TrimSpace(s)
				break
			}
		}
	}
}

func (l *logWatch) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.part) > 0 {
		l.line(string(l.part))
		l.part = nil
	}
	l.closed = true
	if err := l.file.Close(); err != nil && l.writeErr == nil {
		l.writeErr = err // a failed close can lose what was written: unsaved says so
	}
}

// unsaved says how much of the server's output is missing from its log file, and why; ""
// when nothing is.
func (l *logWatch) unsaved() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dropped == 0 {
		if l.writeErr != nil {
			return fmt.Sprintf("the server log could not be closed (%v) and may be incomplete; the last lines are kept in memory", l.writeErr)
		}
		return ""
	}
	return fmt.Sprintf("%d bytes of server output could not be written to the server log (%v); the last lines are kept in memory", l.dropped, l.writeErr)
}

func (l *logWatch) fatalLine() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fatal
}

// lastLines returns up to n of the last log lines.
func (l *logWatch) lastLines(n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n > len(l.tail) {
		n = len(l.tail)
	}
	return append([]string(nil), l.tail[len(l.tail)-n:]...)
}
