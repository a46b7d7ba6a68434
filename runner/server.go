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

	"github.com/diffusion-check/diffusion-check/runner/suite"
)

// fatalPatterns are log lines by which a server announces that it is dying, even before its
// process exits (spec §1).
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

	exited   chan struct{} // closed when the process has exited
	exitErr  error         // set before exited is closed
	stopOnce sync.Once

	// mem samples the process tree's memory (nil without a sampler); loadWin is open from
	// launch to ready; memNote says why there is no session when starting one failed.
	mem     MemorySession
	loadWin MemoryWindow
	memNote string
}

// serverEnv is what the runner knows about where and how to start servers.
type serverEnv struct {
	dir        string   // folder for logs and perf logs of this server start
	suiteDir   string   // default working directory
	executable string   // diffusion-check itself, for builtin servers
	environ    []string // base environment of server processes
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
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

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
	cmd := exec.Command(filled[0], filled[1:]...)
	cmd.Dir = spec.Dir
	if cmd.Dir == "" {
		cmd.Dir = env.suiteDir
	}
	cmd.Env = append([]string(nil), env.environ...)
	cmd.Env = append(cmd.Env, "SGLANG_PERF_LOG_DIR="+perfDir, "PYTHONUNBUFFERED=1")
	for k, v := range spec.Env {
		cmd.Env = append(cmd.Env, k+"="+fill(v))
	}
	lw := newLogWatch(logFile, spec.Ready.LogMarker)
	cmd.Stdout, cmd.Stderr = lw, lw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
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
		logFile.Close()
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

// waitReady blocks until the log marker appears or the health endpoint answers 200, the
// process exits, or the start timeout passes.
func (s *server) waitReady(ctx context.Context, hc *http.Client) error {
	deadline := time.NewTimer(s.spec.StartTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	health := s.spec.Ready.Health
	for {
		select {
		case <-s.log.ready:
			return nil
		case <-s.exited:
			return fmt.Errorf("%w: process exited during startup (%v) after %s", errNotReady, s.exitErr, time.Since(s.started).Round(time.Millisecond))
		case <-deadline.C:
			return fmt.Errorf("%w: not ready within %s (no %q in the log, no 200 from %s)", errNotReady, s.spec.StartTimeout, s.spec.Ready.LogMarker, health)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			if line := s.log.fatalLine(); line != "" {
				return fmt.Errorf("%w: crashed during startup: %s", errNotReady, line)
			}
			if health != "" && health != "-" && s.healthy(ctx, hc, health) {
				return nil
			}
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
	io.Copy(io.Discard, resp.Body)
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
	pgid := s.cmd.Process.Pid
	select {
	case <-s.exited:
	default:
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(s.spec.StopGrace):
		}
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-s.exited
	if s.mem != nil {
		s.mem.Stop()
	}
}

// logWatch writes the server's output to its log file while watching it line by line for
// the readiness marker and crash patterns, and keeps the last lines for failure details.
type logWatch struct {
	mu     sync.Mutex
	file   *os.File
	marker string
	ready  chan struct{}
	seen   bool
	fatal  string
	part   []byte
	tail   []string
	closed bool
}

func newLogWatch(f *os.File, marker string) *logWatch {
	return &logWatch{file: f, marker: marker, ready: make(chan struct{})}
}

func (l *logWatch) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		if _, err := l.file.Write(p); err != nil {
			return 0, err
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
	l.file.Close()
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
