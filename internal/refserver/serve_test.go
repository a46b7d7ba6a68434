package refserver

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

var runningRE = regexp.MustCompile(`Uvicorn running on (http://\S+)`)

type served struct {
	url  string
	log  *syncBuffer
	exit *exitRecorder
	done chan error
	stop context.CancelFunc
}

// serveAsync runs Serve on a free port and waits for its startup line.
func serveAsync(t *testing.T, cfg Config) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	s := &served{log: &syncBuffer{}, exit: &exitRecorder{}, done: make(chan error, 1), stop: cancel}
	cfg.Addr, cfg.Log, cfg.Exit = "127.0.0.1:0", s.log, s.exit.exit
	if cfg.StepMs == 0 {
		cfg.StepMs = 1
	}
	go func() { s.done <- Serve(ctx, cfg) }()
	deadline := time.Now().Add(eventTimeout)
	for time.Now().Before(deadline) {
		if m := runningRE.FindStringSubmatch(s.log.String()); m != nil {
			s.url = m[1]
			return s
		}
		select {
		case err := <-s.done:
			t.Fatalf("Serve returned early: %v\n%s", err, s.log)
		case <-time.After(2 * time.Millisecond):
		}
	}
	t.Fatalf("no startup line:\n%s", s.log)
	return nil
}

// wait returns Serve's result, failing if it takes longer than d.
func (s *served) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case err := <-s.done:
		return err
	case <-time.After(d):
		t.Fatalf("Serve did not return within %v", d)
		return nil
	}
}

func TestServeLifecycle(t *testing.T) {
	before := runtime.NumGoroutine()
	client := &http.Client{Transport: &http.Transport{}}
	began := time.Now()
	perfDir := t.TempDir()
	s := serveAsync(t, Config{LoadMs: 80, PerfLogDir: perfDir, StageLogging: true, Faults: faults(t, "hang-at=2")})
	if d := time.Since(began); d < 80*time.Millisecond {
		t.Errorf("ready after %v, before the 80ms load", d)
	}
	log := s.log.String()
	load, ready, bound := strings.Index(log, "Pipeline loaded"), strings.Index(log, "Application startup complete."), strings.Index(log, "Uvicorn running on")
	if load < 0 || ready < load || bound < ready {
		t.Errorf("want the load line, then uvicorn's startup line, then its bind line:\n%s", log)
	}
	// /health turns 200 once the warm-up has ended, with SGLang's body.
	var body []byte
	for deadline := time.Now().Add(eventTimeout); ; {
		resp, err := client.Get(s.url + "/health")
		if err != nil {
			t.Fatalf("GET /health: %v", err)
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK || time.Now().After(deadline) {
			break
		}
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("GET /health during warm-up: %d, want 503", resp.StatusCode)
		}
		time.Sleep(2 * time.Millisecond)
	}
	if string(body) != `{"status":"ok"}` || !strings.Contains(s.log.String(), "The server is fired up and ready to roll!") {
		t.Fatalf("GET /health after warm-up: %s\n%s", body, s.log)
	}
	resp, err := client.Post(s.url+"/v1/images/generations", "application/json", strings.NewReader(`{"prompt": "p", "size": "16x16"}`))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("image: %v %v", resp, err)
	}
	resp.Body.Close()
	// The warm-up wrote no record; the request wrote its own before answering.
	if recs := perfRecords(t, perfDir); len(recs) != 1 {
		t.Errorf("%d perf records after the warm-up and one request, want 1", len(recs))
	}
	// Request 2 hangs; a video job is running: shutdown must not wait for either. Waiting
	// would show as the hung request cut off at the shutdown timeout instead of answered 503,
	// and as a video finished instead of aborted; no wall-clock bound is needed to see it.
	hung := make(chan int, 1)
	go func() {
		resp, err := client.Post(s.url+"/v1/images/generations", "application/json", strings.NewReader(`{"prompt": "p"}`))
		if err != nil {
			hung <- 0
			return
		}
		resp.Body.Close()
		hung <- resp.StatusCode
	}()
	waitLog(t, s.log, "#2] denoising step 11/20 is taking long")
	resp, err = client.Post(s.url+"/v1/videos", "application/json", strings.NewReader(`{"prompt": "p", "size": "32x32", "num_inference_steps": 1000}`))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("video: %v %v", resp, err)
	}
	resp.Body.Close()
	waitLog(t, s.log, "#3] video 32x32")

	s.stop()
	if err := s.wait(t, eventTimeout); err != nil {
		t.Errorf("Serve: %v", err)
	}
	if code := <-hung; code != http.StatusServiceUnavailable {
		t.Errorf("hung request: status %d, want 503 (released at shutdown, not cut off)", code)
	}
	if log := s.log.String(); !strings.HasSuffix(log, "Application shutdown complete.\n") || strings.Contains(log, "video 32x32 done in") {
		t.Errorf("log does not end with the shutdown line, or the video was waited for:\n%s", log)
	}
	client.CloseIdleConnections()
	deadline := time.Now().Add(eventTimeout)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines after Serve returned, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

func TestServeFailStartup(t *testing.T) {
	log := &syncBuffer{}
	err := Serve(t.Context(), Config{Addr: "127.0.0.1:0", Log: log, Faults: faults(t, "fail-startup")})
	if !errors.Is(err, ErrStartup) {
		t.Fatalf("err = %v, want ErrStartup", err)
	}
	out := log.String()
	if !strings.Contains(out, "RuntimeError: CUDA out of memory while loading weights") || strings.Contains(out, "Application startup complete.") ||
		strings.Contains(out, "Uvicorn running") {
		t.Errorf("log:\n%s", out)
	}
}

func TestServeCrash(t *testing.T) {
	s := serveAsync(t, Config{Faults: faults(t, "crash-at=1")})
	resp, err := http.Post(s.url+"/v1/images/generations", "application/json", strings.NewReader(`{"prompt": "p", "size": "16x16"}`))
	if err == nil {
		resp.Body.Close()
		t.Errorf("crashing request answered %d", resp.StatusCode)
	}
	if err := s.wait(t, 3*time.Second); !errors.Is(err, ErrCrashed) {
		t.Errorf("Serve: %v, want ErrCrashed", err)
	}
	if got := s.exit.calls(); len(got) != 1 || got[0] != 139 {
		t.Errorf("exit calls %v", got)
	}
}

func TestServeConfigErrors(t *testing.T) {
	err := Serve(t.Context(), Config{StepMs: -1, LoadMs: -2, PerfLag: -time.Second})
	for _, want := range []string{"step-ms: must be ≥ 0, got -1", "load-ms: must be ≥ 0, got -2", "perf-lag: must be ≥ 0, got -1s"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want %q", err, want)
		}
	}
	s := serveAsync(t, Config{})
	addr := strings.TrimPrefix(s.url, "http://")
	if err := Serve(t.Context(), Config{Addr: addr, LoadMs: 1}); err == nil || !strings.Contains(err.Error(), "listen on "+addr) {
		t.Errorf("second server on %s: %v", addr, err)
	}
	s.stop()
	if err := s.wait(t, 3*time.Second); err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// TestWarmupHoldsRequests proves SGLang's warm-up gate (http_server.py): until the warm-up ends
// /health answers an empty 503, /liveness answers, and a generation request waits; then
// /health is {"status": "ok"} and the held request is served.
func TestWarmupHoldsRequests(t *testing.T) {
	h := newHandler(Config{StepMs: 1, Log: io.Discard})
	ts := &testServer{Server: httptest.NewServer(h), h: h}
	t.Cleanup(ts.Close)
	t.Cleanup(h.Close)
	if st, b := ts.call(t, http.MethodGet, "/health", "", nil); st != http.StatusServiceUnavailable || len(b) != 0 {
		t.Errorf("GET /health while warming up: %d %q, want an empty 503", st, b)
	}
	if st, b := ts.call(t, http.MethodGet, "/liveness", "", nil); st != http.StatusOK || string(b) != `{"status":"ok"}` {
		t.Errorf("GET /liveness while warming up: %d %s", st, b)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.URL+"/v1/models", nil)
	held := make(chan *http.Response, 1)
	go func() {
		resp, err := ts.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		held <- resp
	}()
	select {
	case <-held:
		t.Fatal("GET /v1/models was answered during the warm-up")
	case <-time.After(50 * time.Millisecond): // held: nothing can answer it until warmed()
	}
	h.warmed()
	if resp := <-held; resp == nil || resp.StatusCode != http.StatusOK {
		t.Errorf("held GET /v1/models after the warm-up: %v", resp)
	}
	if st, b := ts.call(t, http.MethodGet, "/health", "", nil); st != http.StatusOK || string(b) != `{"status":"ok"}` {
		t.Errorf("GET /health after the warm-up: %d %s", st, b)
	}
}
