package runner

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/sglangenv"

	"github.com/diffusion-check/diffusion-check/suite"
	"github.com/google/go-cmp/cmp"
)

// fakeSGLang writes an executable named sglang that prints its arguments and its stage
// logging variable, then the lines given (shell words: "$3" is its third argument), and
// stays up: a stand-in for `sglang serve` in tests of how the runner starts it.
func fakeSGLang(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sglang")
	script := "#!/bin/sh\necho \"ARGS: $*\"\necho \"STAGE=$" + sglangenv.StageLogging + "\"\n"
	for _, l := range lines {
		script += "echo \"" + l + "\"\n"
	}
	script += "exec sleep 600\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// logLine waits until the server's log holds a line starting with prefix and returns it;
// the process is up, so the wait ends as soon as the script has printed it.
func logLine(t *testing.T, srv *server, prefix string) string {
	t.Helper()
	for {
		for _, l := range srv.log.lastLines(tailLines) {
			if strings.HasPrefix(l, prefix) {
				return l
			}
		}
		select {
		case <-srv.exited:
			t.Fatalf("server exited before logging %q: %v", prefix, srv.exitErr)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// TestStartFailsAtOnceWhenSGLangMovesThePort: SGLang without --strict-ports moves
// a taken port and logs it (server_args.settle_port); the start fails as soon as the line
// appears, naming both ports, instead of waiting out the start timeout (an hour here: the
// test would time out) on a port where something else answers.
func TestStartFailsAtOnceWhenSGLangMovesThePort(t *testing.T) {
	spec := &suite.Server{
		Name:         "sglang",
		Command:      []string{fakeSGLang(t, "[2026-08-17 10:00:00] Port $3 was unavailable, using port 41999 instead"), "serve", "--port", "{port}"},
		Ready:        suite.Readiness{LogMarker: "Application startup complete.", Health: "/health"},
		StartTimeout: time.Hour,
		StopGrace:    time.Second,
	}
	srv, err := startServer(spec, serverEnv{dir: t.TempDir(), suiteDir: t.TempDir(), environ: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stop()
	err = srv.waitReady(t.Context(), http.DefaultClient)
	want := fmt.Sprintf("it logged that port %d was unavailable and that it uses port 41999 instead", srv.port)
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--strict-ports") {
		t.Errorf("got %v, want it to contain %q", err, want)
	}
}

// TestSGLangOutputsGoToTheServerFolder: `sglang serve` saves what it makes under
// --output-path ("outputs/") and what it is sent under --input-save-path ("inputs/uploads"),
// relative to its working directory, the suite's folder (server_args.py). Without those
// options in the command, the runner points both into the server start's folder; with one
// given, the command keeps it and the start says where SGLang saves.
func TestSGLangOutputsGoToTheServerFolder(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name      string
		extra     []string
		wantArgs  string
		wantNotes []string
	}{
		{"not set", nil,
			"ARGS: serve --port PORT --output-path " + filepath.Join(dir, "outputs") + " --input-save-path " + filepath.Join(dir, "inputs", "uploads"), nil},
		{"output path set", []string{"--output-path=/data/out"},
			"ARGS: serve --port PORT --output-path=/data/out --input-save-path " + filepath.Join(dir, "inputs", "uploads"),
			[]string{"the command sets --output-path (or --config may): SGLang saves there, relative to the suite's folder"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := &suite.Server{
				Name:      "sglang",
				Command:   append([]string{fakeSGLang(t), "serve", "--port", "{port}"}, tc.extra...),
				Ready:     suite.Readiness{LogMarker: "never", Health: "-"},
				StopGrace: time.Second,
			}
			srv, err := startServer(spec, serverEnv{dir: dir, suiteDir: t.TempDir(), environ: os.Environ()})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.stop()
			got := strings.ReplaceAll(logLine(t, srv, "ARGS: "), strconv.Itoa(srv.port), "PORT")
			if got != tc.wantArgs {
				t.Errorf("command line\n got %s\nwant %s", got, tc.wantArgs)
			}
			if diff := cmp.Diff(tc.wantNotes, srv.notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStageLoggingOverrideIsSaid: a suite's env may replace the runner's
// SGLANG_DIFFUSION_STAGE_LOGGING=1; the server gets the suite's value, and the start says
// what SGLang makes of it (common.get_bool_env_var: only 1/true/yes/y/t/on are on).
func TestStageLoggingOverrideIsSaid(t *testing.T) {
	for _, tc := range []struct{ value, want string }{
		{"0", "turns SGLang's stage logging OFF: SGLang then writes no performance.log records"},
		{"", "turns SGLang's stage logging OFF"},
		{"banana", "turns SGLang's stage logging OFF"},
		{" Yes ", "SGLang reads it as on and writes performance.log records"},
	} {
		t.Run(tc.value, func(t *testing.T) {
			spec := &suite.Server{
				Name:      "sglang",
				Command:   []string{fakeSGLang(t), "serve", "--port", "{port}"},
				Env:       map[string]string{sglangenv.StageLogging: tc.value},
				Ready:     suite.Readiness{LogMarker: "never", Health: "-"},
				StopGrace: time.Second,
			}
			srv, err := startServer(spec, serverEnv{dir: t.TempDir(), suiteDir: t.TempDir(), environ: os.Environ()})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.stop()
			if got := logLine(t, srv, "STAGE="); got != "STAGE="+tc.value {
				t.Errorf("server environment has %q, want the suite's value %q", got, "STAGE="+tc.value)
			}
			if len(srv.notes) != 1 || !strings.Contains(srv.notes[0], tc.want) {
				t.Errorf("notes %q, want one containing %q", srv.notes, tc.want)
			}
		})
	}
	spec := &suite.Server{Name: "sglang", Command: []string{fakeSGLang(t), "serve", "--port", "{port}", "--output-path", "o", "--input-save-path", "i"},
		Ready: suite.Readiness{LogMarker: "never", Health: "-"}, StopGrace: time.Second}
	srv, err := startServer(spec, serverEnv{dir: t.TempDir(), suiteDir: t.TempDir(), environ: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stop()
	if got := logLine(t, srv, "STAGE="); got != "STAGE=1" {
		t.Errorf("without a suite value the server has %q, want STAGE=1", got)
	}
	if slices.ContainsFunc(srv.notes, func(n string) bool { return strings.Contains(n, sglangenv.StageLogging) }) {
		t.Errorf("a note about stage logging without a suite value: %q", srv.notes)
	}
}

// healthAPI answers GET /health as SGLang does during and after its warmup
// (http_server.health): warming answers of 503, then 200 (or `after`).
type healthAPI struct {
	mu      sync.Mutex
	warming int // 503 answers left
	after   int // the status once warm; 0: 200
	probes  int
}

func (h *healthAPI) RoundTrip(req *http.Request) (*http.Response, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.probes++
	code := h.after
	if code == 0 {
		code = http.StatusOK
	}
	if h.warming > 0 {
		h.warming--
		code = http.StatusServiceUnavailable
	}
	return &http.Response{StatusCode: code, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
}

func (h *healthAPI) left() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.warming
}

// TestReadinessWaitsOutSGLangWarmup: SGLang logs "Application startup complete."
// before its warmup, answers /health 503 until the warmup ends and holds other paths
// meanwhile. Readiness is health 200 (or the marker with a health answer other than 503) and
// the port accepting; a health answer of 503 all along ends in an error saying so; a
// server that logs that its HTTP port moved fails at once, one that moved its scheduler
// port does not. On a synctest clock: no real time passes while it polls.
func TestReadinessWaitsOutSGLangWarmup(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	for _, tc := range []struct {
		name    string
		api     *healthAPI
		lines   []string
		wantErr string // "": ready, with no 503 left
	}{
		{"503 during warmup, then 200", &healthAPI{warming: 40}, []string{"INFO:     Application startup complete."}, ""},
		{"503 all along", &healthAPI{warming: 1 << 30}, []string{"INFO:     Application startup complete."},
			"/health still answered 503 after 1m0s (SGLang answers 503 until its warmup ends)"},
		{"no health path: the marker suffices", &healthAPI{after: http.StatusNotFound}, []string{"INFO:     Application startup complete."}, ""},
		{"scheduler port moved: not ours", &healthAPI{warming: 3}, []string{"Port 5601 was unavailable, using port 5643 instead"}, ""},
		{"HTTP port moved", &healthAPI{}, []string{fmt.Sprintf("Port %d was unavailable, using port %d instead", port, port+42)},
			fmt.Sprintf("it logged that port %d was unavailable and that it uses port %d instead", port, port+42)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				logFile, err := os.Create(filepath.Join(t.TempDir(), "server.log"))
				if err != nil {
					t.Fatal(err)
				}
				spec := &suite.Server{Name: "sglang", StartTimeout: time.Minute,
					Ready: suite.Readiness{LogMarker: "Application startup complete.", Health: "/health"}}
				srv := &server{spec: spec, port: port, baseURL: "http://127.0.0.1:" + strconv.Itoa(port),
					log: newLogWatch(logFile, spec.Ready.LogMarker), exited: make(chan struct{}), started: time.Now()}
				srv.log.port = port
				defer srv.log.close()
				for _, line := range tc.lines {
					fmt.Fprintln(srv.log, line)
				}
				err = srv.waitReady(t.Context(), &http.Client{Transport: tc.api})
				switch {
				case tc.wantErr == "" && err != nil:
					t.Errorf("not ready: %v", err)
				case tc.wantErr == "" && tc.api.left() > 0:
					t.Errorf("ready with %d answers of 503 still to come", tc.api.left())
				case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
					t.Errorf("got %v, want an error containing %q", err, tc.wantErr)
				}
			})
		})
	}
}
