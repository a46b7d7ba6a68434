package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/loadclock"
	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/internal/memory"
	"github.com/diffusion-check/diffusion-check/internal/perflog"
	"github.com/diffusion-check/diffusion-check/internal/proc"
	"github.com/diffusion-check/diffusion-check/internal/sglangenv"
	"github.com/diffusion-check/diffusion-check/suite"
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

// A server's log (server.log) is capped: it keeps the first logHeadBytes of the server's
// output and, when there is more, a line saying how much was cut and the last logTailBytes
// (held in memory until the server ends); a line longer than logLineBytes keeps its first
// logLineBytes and says how many bytes of it were cut. So a server that writes 1 GB, or a
// 2 GiB line, costs at most 32 MiB of disk and 16 MiB of memory, and the run says it cut
// (docs/reliability.md).
const (
	logHeadBytes = 16 << 20
	logTailBytes = 16 << 20
	logLineBytes = 64 << 10
)

// server is one running server process under test, in its own process group.
type server struct {
	spec       *suite.Server
	cmd        *exec.Cmd
	port       int
	hold       *portHold // the port's reservation among diffusion-check runs (ports.go)
	baseURL    string
	logPath    string
	perfLogDir string
	log        *logWatch
	perf       *perflog.Log
	started    time.Time
	// answered is when the server first answered its health endpoint, 503 or 200 (or, without
	// one, when it logged its ready marker): its workers are ready and its warm-up has begun.
	// ready is when waitReady returned. Without the launcher's line the load clock ends at
	// answered (loadClock).
	answered, ready time.Time
	// startMono is CLOCK_MONOTONIC read just before the spawn, the start of SGLang's load
	// clock (loadclock); monoOK is false where it cannot be read.
	startMono int64
	monoOK    bool

	guard    *proc.Guard   // kills the process group if the run dies before stop
	exited   chan struct{} // closed when the process has exited
	exitErr  error         // set before exited is closed
	stopOnce sync.Once

	// notes are what the run says about this start beside its start line: a suite env that
	// turns SGLang's stage logging off, where SGLang's outputs go.
	notes []string
	// survivors names the processes that had left the server's process group (setsid) and
	// were still running after it was killed: stop killed them (or could not: left).
	survivors, left []string

	// mem samples the process tree's memory (nil without a sampler); loadWin is open from
	// launch to ready; memNote says why there is no session when starting one failed.
	mem     memory.Session
	loadWin memory.Window
	memNote string
	// memMarks are the windows of the timeline (timeline.go).
	memMarks memoryMarks
}

// serverEnv is what the runner knows about where and how to start servers.
type serverEnv struct {
	dir        string    // folder for logs and perf logs of this server start
	suiteDir   string    // default working directory
	executable string    // diffusion-check itself, for builtin servers
	environ    []string  // base environment of server processes
	mirror     io.Writer // receives every log line as it is written; nil: none
	// mediaTools is the run's ffmpeg probe for a builtin server (media.ToolsEnv), so that it
	// does not probe the same programs again; "" lets it probe.
	mediaTools string
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
	if b.TaskType != "" {
		args = append(args, "--task-type", b.TaskType)
	}
	if b.ModelID != "" {
		args = append(args, "--model-id", b.ModelID)
	}
	if b.LoraPath != "" {
		args = append(args, "--lora-path", b.LoraPath)
	}
	if b.BatchingMaxSize > 1 {
		args = append(args, "--batching-max-size", strconv.Itoa(b.BatchingMaxSize),
			"--batching-delay-ms", strconv.FormatFloat(b.BatchingDelayMs, 'f', -1, 64))
	}
	if b.HTTPStartMs > 0 {
		args = append(args, "--http-start-ms", strconv.FormatFloat(b.HTTPStartMs, 'f', -1, 64))
	}
	if b.WarmupMs > 0 {
		args = append(args, "--warmup-ms", strconv.FormatFloat(b.WarmupMs, 'f', -1, 64))
	}
	for _, f := range b.Faults {
		args = append(args, "--fault", f)
	}
	return args, nil
}

// stageLoggingNote says what a suite's value of sglangenv.StageLogging, which replaces the runner's
// "1", does to SGLang.
func stageLoggingNote(v string) string {
	if sglangenv.Bool(v) {
		return fmt.Sprintf("the suite's env sets %s=%s (diffusion-check sets 1); SGLang reads it as on and writes performance.log records",
			sglangenv.StageLogging, v)
	}
	return fmt.Sprintf(
		"the suite's env sets %s=%q, which turns SGLang's stage logging OFF: SGLang then writes no performance.log records and no stage or step timings "+
			"(gpu_worker._execute_forward_common), so perf.record fails on every request unless its case sets checks.perf_record: false",
		sglangenv.StageLogging,
		v,
	)
}

// The options by which `sglang serve` saves what it makes and what it is sent
// (server_args.py, defaults "outputs/" and "inputs/uploads" under the server's working
// directory, which is the suite's folder unless the suite sets dir).
const (
	outputPathFlag    = "--output-path"
	inputSavePathFlag = "--input-save-path"
)

// sglangOutputs points SGLang's saved outputs and uploads into the server start's folder,
// dir, for an `sglang serve` command that does not set them itself: else every run would
// write them into the suite's folder (a checkout). A command that sets one, or a --config
// file (which may), keeps its own; the note says where they go either way.
func sglangOutputs(spec *suite.Server, argv []string, dir string) ([]string, []string, error) {
	if spec.Builtin != nil || !suite.SGLangServe(argv) {
		return argv, nil, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, err
	}
	out := slices.Clone(argv)
	var notes []string
	for _, f := range []struct{ flag, sub string }{{outputPathFlag, "outputs"}, {inputSavePathFlag, filepath.Join("inputs", "uploads")}} {
		if suite.FlagGiven(argv, f.flag) {
			notes = append(notes, fmt.Sprintf("the command sets %s (or --config may): SGLang saves there, relative to %s", f.flag, serverDir(spec)))
			continue
		}
		out = append(out, f.flag, filepath.Join(abs, f.sub))
	}
	return out, notes, nil
}

// serverDir is the working directory of a server process, for messages.
func serverDir(spec *suite.Server) string {
	if spec.Dir != "" {
		return spec.Dir
	}
	return "the suite's folder"
}

// portMoved matches SGLang's line for a port it could not bind and replaced
// (server_args.py ServerArgs.settle_port, called by _adjust_network_ports without
// --strict-ports): "Port X was unavailable, using port Y instead".
var portMoved = regexp.MustCompile(`Port ([0-9]+) was unavailable, using port ([0-9]+) instead`)

// startServer launches a server process; it does not wait for readiness.
func startServer(spec *suite.Server, env serverEnv) (_ *server, err error) {
	args, err := argv(spec, env.executable)
	if err != nil {
		return nil, err
	}
	if len(args) == 0 {
		return nil, errors.New("empty command")
	}
	port, hold, err := reservePort(freePort)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			hold.release()
		}
	}()
	// Absolute: the server runs in its own working directory.
	perfDir, err := filepath.Abs(filepath.Join(env.dir, "perf"))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(perfDir, 0o755); err != nil {
		return nil, err
	}
	// Before the log is created, so that its failure leaves no file open.
	filled, outNote, err := sglangOutputs(spec, withPort(args, port), env.dir)
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(env.dir, "server.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	// Every error path from here closes the log; once the process runs, its exit does (launch).
	defer func() {
		if err != nil {
			_ = logFile.Close()
		}
	}()
	cmd, notes := serverCommand(spec, env, filled, perfDir, port)
	lw := newLogWatch(logFile, spec.Ready.LogMarker)
	lw.port = port
	lw.mirror = env.mirror
	cmd.Stdout, cmd.Stderr = lw, lw
	s := &server{
		spec: spec, cmd: cmd, port: port,
		baseURL:    "http://127.0.0.1:" + strconv.Itoa(port),
		logPath:    logPath,
		perfLogDir: perfDir,
		hold:       hold,
		log:        lw,
		perf:       perflog.New(filepath.Join(perfDir, "performance.log")),
		exited:     make(chan struct{}),
		notes:      append(notes, outNote...),
	}
	if err := s.launch(); err != nil {
		return nil, err
	}
	return s, nil
}

// withPort fills the "{port}" placeholders of a command template.
func withPort(args []string, port int) []string {
	filled := make([]string, len(args))
	for i, a := range args {
		filled[i] = fillPort(a, port)
	}
	return filled
}

// fillPort fills the "{port}" placeholders of one argument or environment value.
func fillPort(s string, port int) string { return strings.ReplaceAll(s, "{port}", strconv.Itoa(port)) }

// serverCommand is the server's process, not yet started, and the notes its environment
// calls for.
func serverCommand(spec *suite.Server, env serverEnv, argv []string, perfDir string, port int) (*exec.Cmd, []string) {
	// Its own process group, killed by the kernel if the run dies (Pdeathsig), and by a
	// guard (launch) together with everything else in the group.
	cmd := proc.Group(argv[0], argv[1:]...)
	cmd.Dir = spec.Dir
	if cmd.Dir == "" {
		cmd.Dir = env.suiteDir
	}
	cmd.Env = serverEnviron(env.environ)
	// SGLang writes a performance.log record only with stage logging on
	// (gpu_worker._execute_forward_common); its own harness sets both for every server
	// (test/server/test_server_utils.py). A suite's env, appended after, may override it.
	cmd.Env = append(cmd.Env, sglangenv.PerfLogDir+"="+perfDir, sglangenv.StageLogging+"=1", "PYTHONUNBUFFERED=1")
	if spec.Builtin != nil && env.mediaTools != "" {
		cmd.Env = append(cmd.Env, media.ToolsEnv+"="+env.mediaTools)
	}
	for k, v := range spec.Env {
		cmd.Env = append(cmd.Env, k+"="+fillPort(v, port))
	}
	// Orphaned grandchildren may keep the log pipe open; do not wait for them forever.
	cmd.WaitDelay = 2 * time.Second
	var notes []string
	if v, ok := spec.Env[sglangenv.StageLogging]; ok {
		notes = append(notes, stageLoggingNote(v))
	}
	return cmd, notes
}

// launch starts the server's process and its guard. From then on the process's exit closes
// the log; on an error the caller closes it.
func (s *server) launch() error {
	s.started = time.Now()
	s.startMono, s.monoOK = loadclock.Now()
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", s.cmd.Args[0], err)
	}
	var err error
	if s.guard, err = proc.StartGuard(s.cmd.Process.Pid); err != nil {
		// Without a guard a SIGKILL of the run would leave the server's children running.
		// The guard's error is the one to return; these only undo the start.
		_ = proc.KillGroup(s.cmd)
		_ = s.cmd.Wait()
		return fmt.Errorf("start %s: %w", s.cmd.Args[0], err)
	}
	go func() {
		s.exitErr = s.cmd.Wait()
		if s.exitErr == nil {
			s.exitErr = errors.New("exit status 0")
		}
		s.log.close()
		close(s.exited)
	}()
	return nil
}

// errNotReady wraps every readiness failure.
var errNotReady = errors.New("server not ready")

// waitReady blocks until the server is ready, the process exits, or the start timeout
// passes. Ready means signalled and accepting connections on its port. Signalled: the health
// endpoint answered 200, or the log marker appeared and the health endpoint (when there is
// one) has answered something other than 503. SGLang logs uvicorn's "Application startup
// complete." before its warmup runs, answers /health with 503 until the warmup ends and holds
// every other path meanwhile (entrypoints/http_server.py health, wait_for_server_warmup): a
// request sent on the marker alone would wait out the warmup inside its own timing. And
// uvicorn logs the marker before it binds its socket, so the marker alone also races the
// bind and a first request sent on it is refused.
func (s *server) waitReady(ctx context.Context, hc *http.Client) error {
	deadline := time.NewTimer(s.spec.StartTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	health := s.spec.Ready.Health
	hasHealth := health != "" && health != "-"
	marker := s.log.ready
	markerSeen := false
	healthStatus := 0 // the last status the health endpoint answered; 0: no answer yet
	var lastHealth time.Time
	for {
		select {
		case <-marker:
			markerSeen, marker = true, nil
		case <-s.exited:
			return fmt.Errorf("%w: process exited during startup (%w) after %s", errNotReady, s.exitErr, time.Since(s.started).Round(time.Millisecond))
		case <-deadline.C:
			return s.notReadyWhy(markerSeen, healthStatus)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			if line := s.log.fatalLine(); line != "" {
				return fmt.Errorf("%w: crashed during startup: %s", errNotReady, line)
			}
			if why := s.portMoved(); why != "" {
				return fmt.Errorf("%w: %s", errNotReady, why)
			}
			if hasHealth && healthStatus != http.StatusOK && time.Since(lastHealth) >= healthPoll {
				lastHealth = time.Now()
				if code := s.healthStatus(ctx, hc, health); code != 0 {
					healthStatus = code
					if s.answered.IsZero() {
						s.answered = time.Now()
					}
				}
			}
		}
		if markerSeen && !hasHealth && s.answered.IsZero() {
			s.answered = time.Now()
		}
		signalled := healthStatus == http.StatusOK ||
			markerSeen && (!hasHealth || healthStatus != 0 && healthStatus != http.StatusServiceUnavailable)
		if signalled && s.accepting() {
			s.ready = time.Now()
			if s.answered.IsZero() {
				s.answered = s.ready
			}
			return nil
		}
	}
}

// notReadyWhy says why a start ran out of time, from what was seen of it.
func (s *server) notReadyWhy(markerSeen bool, healthStatus int) error {
	health := s.spec.Ready.Health
	marker := strconv.Quote(s.spec.Ready.LogMarker)
	switch {
	case healthStatus == http.StatusServiceUnavailable:
		return fmt.Errorf("%w: %s still answered 503 after %s (SGLang answers 503 until its warmup ends)", errNotReady, health, s.spec.StartTimeout)
	case healthStatus == http.StatusOK:
		return fmt.Errorf("%w: 200 from %s, but 127.0.0.1:%d did not accept connections within %s", errNotReady, health, s.port, s.spec.StartTimeout)
	case markerSeen && (health == "" || health == "-" || healthStatus != 0):
		return fmt.Errorf("%w: log marker %s seen, but 127.0.0.1:%d did not accept connections within %s", errNotReady, marker, s.port, s.spec.StartTimeout)
	case markerSeen:
		return fmt.Errorf("%w: log marker %s seen, but %s never answered within %s", errNotReady, marker, health, s.spec.StartTimeout)
	}
	return fmt.Errorf("%w: not ready within %s (no %s in the log, no 200 from %s)", errNotReady, s.spec.StartTimeout, marker, health)
}

// healthStatus asks the health endpoint once: its HTTP status, or 0 when it did not answer.
func (s *server) healthStatus(ctx context.Context, hc *http.Client, path string) int {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.baseURL+path, nil)
	if err != nil {
		return 0
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0
	}
	// Drained so that the connection can be reused; only the status matters here.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return resp.StatusCode
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
	return s.portMoved()
}

// portMoved says that the server moved off the port diffusion-check gave it, or "": what
// answers on that port is not this server.
func (s *server) portMoved() string {
	line := s.log.movedLine()
	if line == "" {
		return ""
	}
	m := portMoved.FindStringSubmatch(line)
	return fmt.Sprintf("the server moved off its port: it logged that port %s was unavailable and that it uses port %s instead (%q); "+
		"diffusion-check talks to port %s only. Pass --strict-ports to make SGLang stop instead of moving", m[1], m[2], line, m[1])
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
	// Before any signal, while every descendant is still linked to its parent: the workers
	// that left the group are found through it.
	tree := proc.Snapshot(s.cmd.Process.Pid)
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
	s.survivors, s.left = tree.Sweep()
	// Released only now: until the group is gone, a run killed mid-stop leaves it to the guard.
	_ = s.guard.Release()
	s.hold.release() // the group is gone, and with it the port's listener
	if s.mem != nil {
		s.mem.Stop()
	}
}

// serverEnviron is the environment a server process starts from: environ without the
// credentials of GitHub and of the Actions runner, which a server (code the suite names, so
// possibly a pull request's) has no use for and must not be able to read or leak: the
// tokens (GITHUB_TOKEN, GH_TOKEN, GH_ENTERPRISE_TOKEN, GITHUB_ENTERPRISE_TOKEN), every
// action input (INPUT_*, which holds github_token), and every runner-internal ACTIONS_*
// variable (ACTIONS_RUNTIME_TOKEN, ACTIONS_ID_TOKEN_REQUEST_URL/TOKEN, ACTIONS_CACHE_URL,
// ACTIONS_RESULTS_URL, ...). The rest (PATH, HOME, CUDA_*, HF_TOKEN for model downloads, the
// non-secret GITHUB_* context) passes; the suite's env is added on top by the caller.
func serverEnviron(environ []string) []string {
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
// What it writes to the file is capped (logHeadBytes, logTailBytes, logLineBytes).
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
	part     []byte // the current line, up to logLineBytes of it, while it is not watched
	lineLen  int    // bytes of the current line kept (at most logLineBytes)
	lineCut  int64  // bytes of the current line past logLineBytes, not kept
	watched  bool   // the current line reached logLineBytes and was watched then
	tail     []string
	closed   bool
	mirror   io.Writer // nil: lines go only to the file
	// port is the port the server was told to listen on; moved is the log line saying that
	// the server listens elsewhere instead ("" while none).
	port  int
	moved string
	// workersReady is the CLOCK_MONOTONIC reading of SGLang's launcher line (loadclock), when
	// readySeen; loadEvent is closed once that line or the ready marker was seen, whichever
	// comes first (SGLang logs the line before its HTTP server, so before the marker).
	workersReady int64
	readySeen    bool
	loadEvent    chan struct{}
	loadSignal   bool

	// total is every byte of output; written what went to the file's head. Past the head,
	// output goes to ring (the last logTailBytes, ringAt the next byte to write, ringFull
	// once it wrapped), written after a cut line when the log is closed. cutLines counts
	// the lines cut to logLineBytes, cutLineBytes the bytes they lost.
	total, written int64
	stored         int64 // bytes of output and line-cut notes, the file's if nothing were cut
	ring           []byte
	ringAt         int
	ringFull       bool
	cutLines       int
	cutLineBytes   int64
	// seeks are the watches for markers in the lines to come (seek).
	seeks []*logSeek
}

func newLogWatch(f io.WriteCloser, marker string) *logWatch {
	return &logWatch{file: f, marker: marker, ready: make(chan struct{}), loadEvent: make(chan struct{})}
}

// Write never fails: what the log file refuses is counted (unsaved) and the rest of the
// watching goes on.
func (l *logWatch) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total += int64(len(p))
	for data := p; len(data) > 0; {
		i := bytes.IndexByte(data, '\n')
		seg := data
		if i >= 0 {
			seg = data[:i]
		}
		keep := seg[:min(len(seg), logLineBytes-l.lineLen)]
		l.part = append(l.part, keep...)
		l.lineLen += len(keep)
		l.keep(keep)
		l.lineCut += int64(len(seg) - len(keep))
		if l.lineLen == logLineBytes && !l.watched {
			// A line that may never end is watched at its cap, and not held.
			l.line(string(l.part))
			l.part, l.watched = l.part[:0], true
		}
		if i < 0 {
			break
		}
		l.endLine(true)
		data = data[i+1:]
	}
	return len(p), nil
}

// endLine ends the current line: in the file (with a note when it was cut, and its line
// break when it had one) and for the watch.
func (l *logWatch) endLine(newline bool) {
	if l.lineCut > 0 {
		l.keep(fmt.Appendf(nil, " … [diffusion-check: %d bytes of this line cut, past %d KiB]", l.lineCut, logLineBytes>>10))
		l.cutLines++
		l.cutLineBytes += l.lineCut
	}
	if newline {
		l.keep([]byte{'\n'})
	}
	if !l.watched {
		l.line(string(bytes.TrimRight(l.part, "\r")))
	}
	l.part, l.lineLen, l.lineCut, l.watched = l.part[:0], 0, 0, false
}

// keep stores output bytes: in the file up to logHeadBytes, then in the tail ring.
func (l *logWatch) keep(b []byte) {
	if l.closed || len(b) == 0 {
		return
	}
	l.stored += int64(len(b))
	if room := logHeadBytes - l.written; room > 0 {
		head := b[:min(int64(len(b)), room)]
		l.written += int64(len(head))
		if n, err := l.file.Write(head); err != nil {
			l.dropped += int64(len(head) - n)
			if l.writeErr == nil {
				l.writeErr = err
			}
		}
		b = b[len(head):]
		if len(b) == 0 {
			return
		}
	}
	if l.ring == nil {
		l.ring = make([]byte, logTailBytes)
		if l.mirror != nil {
			_, _ = fmt.Fprintf(l.mirror,
				"│ … [diffusion-check: the server log is past %d MiB; the rest is not shown here, and server.log keeps its last %d MiB]\n",
				logHeadBytes>>20, logTailBytes>>20)
		}
	}
	if len(b) >= len(l.ring) {
		copy(l.ring, b[len(b)-len(l.ring):])
		l.ringAt, l.ringFull = 0, true
		return
	}
	n := copy(l.ring[l.ringAt:], b)
	if n < len(b) {
		copy(l.ring, b[n:])
		l.ringFull = true
	}
	l.ringAt = (l.ringAt + len(b)) % len(l.ring)
}

func (l *logWatch) line(s string) {
	if len(l.tail) == tailLines {
		copy(l.tail, l.tail[1:])
		l.tail = l.tail[:tailLines-1]
	}
	l.tail = append(l.tail, s)
	if l.mirror != nil && l.ring == nil {
		// Best effort: the file holds the log whatever happens to the copy. The prefix keeps
		// a server's line from reading as a workflow command ("::...") in an Actions log.
		_, _ = fmt.Fprintf(l.mirror, "│ %s\n", s)
	}
	if !l.readySeen && strings.Contains(s, loadclock.Key) {
		l.workersReady, l.readySeen = loadclock.Parse(s)
		if l.readySeen {
			l.signalLoad()
		}
	}
	if !l.seen && l.marker != "" && strings.Contains(s, l.marker) {
		l.seen = true
		close(l.ready)
		l.signalLoad()
	}
	if l.moved == "" && l.port != 0 && strings.Contains(s, "was unavailable") {
		// Only a move of the HTTP port matters: settle_port logs the same words for the
		// scheduler and master ports, which start elsewhere.
		if m := portMoved.FindStringSubmatch(s); m != nil && m[1] == strconv.Itoa(l.port) {
			l.moved = strings.TrimSpace(s)
		}
	}
	for _, k := range l.seeks {
		k.see(s)
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

// signalLoad closes loadEvent, once.
func (l *logWatch) signalLoad() {
	if !l.loadSignal {
		l.loadSignal = true
		close(l.loadEvent)
	}
}

// launcherLine returns the reading of SGLang's launcher line, and whether the log has it;
// markerSeen says whether the ready marker was seen.
func (l *logWatch) launcherLine() (ns int64, seen, markerSeen bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.workersReady, l.readySeen, l.seen
}

func (l *logWatch) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lineLen > 0 || l.lineCut > 0 {
		l.endLine(false)
	}
	if l.ring != nil && !l.closed {
		// The tail, from its first whole line, after a line that says what was cut.
		tail := l.ring[:l.ringAt]
		if l.ringFull {
			tail = append(slices.Clone(l.ring[l.ringAt:]), l.ring[:l.ringAt]...)
		}
		if i := bytes.IndexByte(tail, '\n'); i >= 0 && i+1 < len(tail) {
			tail = tail[i+1:]
		}
		note := fmt.Sprintf("\n… [diffusion-check: %d bytes of server output cut here: server.log keeps the first %d MiB and the last %d MiB]\n",
			l.stored-l.written-int64(len(tail)), logHeadBytes>>20, logTailBytes>>20)
		for _, b := range [][]byte{[]byte(note), tail} {
			if n, err := l.file.Write(b); err != nil {
				l.dropped += int64(len(b) - n)
				if l.writeErr == nil {
					l.writeErr = err
				}
			}
		}
		l.ring = nil
	}
	l.closed = true
	if err := l.file.Close(); err != nil && l.writeErr == nil {
		l.writeErr = err // a failed close can lose what was written: unsaved says so
	}
}

// cutNote says how the log file was cut (logHeadBytes, logTailBytes, logLineBytes), for the
// run to tell; "" when nothing was.
func (l *logWatch) cutNote() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var parts []string
	if between := l.stored - l.written - logTailBytes; l.written >= logHeadBytes && between > 0 {
		parts = append(
			parts,
			fmt.Sprintf("the server wrote %s; the log keeps its first %d MiB and its last %d MiB, and says where %s were cut", mib(l.total),
				logHeadBytes>>20, logTailBytes>>20, mib(between)),
		)
	}
	if l.cutLines > 0 {
		parts = append(parts,
			fmt.Sprintf("%d lines longer than %d KiB kept their first %d KiB (%s cut)", l.cutLines, logLineBytes>>10, logLineBytes>>10, mib(l.cutLineBytes)))
	}
	return strings.Join(parts, "; ")
}

// mib is a byte count in MiB, for people.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

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

// movedLine is the server's log line saying that it moved off its port, or "".
func (l *logWatch) movedLine() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.moved
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

// launcherLineWait bounds how long loadClock waits, after the server is ready, for its log
// to reach the launcher's line or the ready marker: both were written before the health
// endpoint answered, so they are only still in the pipe; a server that logs neither (a
// custom one, health-checked only) costs at most this once per start.
const launcherLineWait = time.Second

// loadSplit is a ready server's start as SGLang's harness splits it.
type loadSplit struct {
	load, warmup time.Duration
	// launcher is true when load comes from SGLang's launcher line; fallback says why not
	// (the load then ends at the first answer of the health endpoint).
	launcher bool
	fallback string
	missing  bool // fallback because the server logged no line
}

// loadClock splits a ready server's start as SGLang's harness does: load is launch → all
// workers ready, warm-up excluded (PR #39206, test_server_load_clock_excludes_warmup): the
// CLOCK_MONOTONIC reading of the launcher's `[server-load] workers_ready_monotonic_ns=` line
// minus the reading just before the spawn (loadclock). A server that logs no such line
// (SGLang before the line, another server) keeps diffusion-check's earlier clock, the first
// answer of the health endpoint, 503 or 200 (SGLang's HTTP server starts only once every
// worker is ready, launch_server.py, and answers /health with 503 until its warm-up ends),
// which includes the HTTP server's start-up. warmup is from that answer until /health answered
// 200 and the port accepted connections, either way.
func (s *server) loadClock(ctx context.Context) loadSplit {
	out := loadSplit{load: s.answered.Sub(s.started), warmup: s.ready.Sub(s.answered)}
	ns, seen, markerSeen := s.log.launcherLine()
	if !seen && !markerSeen && s.spec.Ready.LogMarker != "" {
		t := time.NewTimer(launcherLineWait)
		select {
		case <-s.log.loadEvent:
		case <-s.exited:
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
		ns, seen, _ = s.log.launcherLine()
	}
	switch {
	case !seen:
		out.fallback, out.missing = fmt.Sprintf("the server logged no %q line (SGLang's launcher logs it since PR #39206)", loadclock.Key), true
	case !s.monoOK:
		out.fallback = "this host's CLOCK_MONOTONIC cannot be read (not Linux)"
	default:
		d, err := loadclock.Span(s.startMono, ns, time.Since(s.started))
		if err != nil {
			out.fallback = err.Error()
			break
		}
		out.load, out.launcher = d, true
	}
	return out
}
