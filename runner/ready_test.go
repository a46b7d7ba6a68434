package runner

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/diffusion-check/diffusion-check/suite"
)

// stubPortEnv makes the test binary act as a uvicorn-like server (TestUvicornStubProcess).
const stubPortEnv = "DIFFUSION_CHECK_UVICORN_STUB_PORT"

// stubGateEnv names a file the stub waits for between its marker and binding the port: the
// test creates it once it has checked that the marker alone did not open the port, so that the
// check does not depend on how fast a loaded machine reads the log.
const stubGateEnv = "DIFFUSION_CHECK_UVICORN_STUB_GATE"

// stubImageHandler answers /health and image generations, as a diffusion server would.
func stubImageHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("POST /v1/images/generations", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"id": "req-1", "data": [{"b64_json": "aGVsbG8="}]}`)
	})
	return mux
}

// TestUvicornStubProcess is not a test: run with the stub env set, it is a server that logs
// in uvicorn's order: "Application startup complete." first, the socket bound 200 ms later,
// then "Uvicorn running on ...".
func TestUvicornStubProcess(t *testing.T) {
	port := os.Getenv(stubPortEnv)
	if port == "" {
		t.Skip("helper process of TestReadinessUvicornOrder")
	}
	fmt.Println("INFO:     Waiting for application startup.")
	fmt.Println("INFO:     Application startup complete.")
	if gate := os.Getenv(stubGateEnv); gate != "" {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat(gate); err == nil {
				break
			}
		}
	}
	time.Sleep(200 * time.Millisecond)
	l, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		fmt.Println("ERROR:", err)
		os.Exit(1)
	}
	fmt.Println("INFO:     Uvicorn running on http://127.0.0.1:" + port + " (Press CTRL+C to quit)")
	http.Serve(l, stubImageHandler())
	os.Exit(0)
}

// Readiness waits for the marker and the port: against a server that logs the marker 200 ms
// (or more: it binds only once the test has looked) before it binds, the first request right after readiness is answered, 20 times out of 20.
// The marker alone is not enough: a connection tried on it is refused (checked each time, so
// the test shows the race it guards against).
func TestReadinessUvicornOrder(t *testing.T) {
	spec := &suite.Server{
		Name:    "uvicorn-stub",
		Command: []string{os.Args[0], "-test.run=^TestUvicornStubProcess$"},
		Env:     map[string]string{stubPortEnv: "{port}"},
		Ready:   suite.Readiness{LogMarker: "Application startup complete.", Health: "-"},
		// One start takes about 200 ms; the limit only stops a broken test.
		StartTimeout: 30 * time.Second,
		StopGrace:    2 * time.Second,
	}
	hc := &http.Client{Timeout: 10 * time.Second}
	for run := 1; run <= 20; run++ {
		gate := filepath.Join(t.TempDir(), "bind")
		spec.Env[stubGateEnv] = gate
		srv, err := startServer(spec, serverEnv{dir: t.TempDir(), suiteDir: t.TempDir(), environ: os.Environ()})
		if err != nil {
			t.Fatal(err)
		}
		<-srv.log.ready
		if srv.accepting() {
			t.Errorf("run %d: the port accepted connections when the marker appeared: the stub does not reproduce uvicorn's order", run)
		}
		// Now let the stub bind, 200 ms later: readiness must wait for it.
		if err := os.WriteFile(gate, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		err = srv.waitReady(t.Context(), hc)
		if err != nil {
			srv.stop()
			t.Fatalf("run %d: %v", run, err)
		}
		resp, err := hc.Post(srv.baseURL+"/v1/images/generations", "application/json", strings.NewReader(`{"prompt": "x"}`))
		srv.stop()
		if err != nil {
			t.Fatalf("run %d: request 1 right after readiness: %v", run, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("run %d: request 1: HTTP %d", run, resp.StatusCode)
		}
	}
}

// A marker without the port ever accepting connections is not ready: the start times out
// with an error that says so. The wait begins once the marker is in the log, so that a slow
// start of sh on a loaded machine cannot turn the error into "no marker".
func TestReadinessMarkerWithoutPort(t *testing.T) {
	spec := &suite.Server{
		Name:         "marker-only",
		Command:      []string{"sh", "-c", "echo 'INFO:     Application startup complete.'; sleep 30"},
		Ready:        suite.Readiness{LogMarker: "Application startup complete.", Health: "-"},
		StartTimeout: 300 * time.Millisecond,
		StopGrace:    time.Second,
	}
	srv, err := startServer(spec, serverEnv{dir: t.TempDir(), suiteDir: t.TempDir(), environ: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stop()
	select {
	case <-srv.log.ready:
	case <-time.After(30 * time.Second):
		t.Fatal("the marker never appeared in the log")
	}
	err = srv.waitReady(t.Context(), http.DefaultClient)
	if err == nil ||
		!strings.Contains(err.Error(),
			`log marker "Application startup complete." seen, but 127.0.0.1:`+strconv.Itoa(srv.port)+" did not accept connections within 300ms") {
		t.Errorf("got %v", err)
	}
}

// freeAddr returns a loopback port nothing listens on (yet).
func freeAddr(t *testing.T) int {
	t.Helper()
	p, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A request refused before any byte was sent is sent again once the port accepts
// connections; when the port never does, the error says that nothing was sent and why the
// readiness check failed. A refusal is never reported as the server's answer.
func TestGenerateRefusedBeforeSend(t *testing.T) {
	c := &suite.Case{ID: "t2i", Modality: suite.Image, Request: suite.Request{Prompt: "x", N: 1, OutputFormat: "png"}}
	for _, tt := range []struct {
		name    string
		bindIn  time.Duration // <0: never
		timeout time.Duration
		wantErr string
	}{
		{"port accepts 150 ms later: sent again", 150 * time.Millisecond, 10 * time.Second, ""},
		{"port never accepts", -1, 400 * time.Millisecond, "nothing was sent, and the readiness check failed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			port := freeAddr(t)
			srv := &server{port: port, baseURL: "http://127.0.0.1:" + strconv.Itoa(port), exited: make(chan struct{})}
			if tt.bindIn >= 0 {
				go func() {
					time.Sleep(tt.bindIn)
					l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
					if err != nil {
						t.Error(err)
						return
					}
					hs := &http.Server{Handler: stubImageHandler()}
					go hs.Serve(l)
					t.Cleanup(func() { hs.Close() })
				}()
			}
			cl := &client{http: &http.Client{}, base: srv.baseURL, dir: t.TempDir()}
			ctx, cancel := context.WithTimeout(t.Context(), tt.timeout)
			defer cancel()
			rep, _, err := srv.generate(ctx, cl, c)
			switch {
			case tt.wantErr == "" && (err != nil || rep.ID != "req-1"):
				t.Errorf("got %+v, %v; want the reply of the second attempt", rep, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "connection refused")):
				t.Errorf("error %v, want one containing %q and the refusal", err, tt.wantErr)
			}
		})
	}
}

func TestRefusedBeforeSend(t *testing.T) {
	_, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(freeAddr(t)))
	for _, tt := range []struct {
		name  string
		err   error
		wrote bool
		want  bool
	}{
		{"refused, nothing written", fmt.Errorf("POST x: %w", err), false, true},
		{"refused after the request was written", err, true, false},
		{"another error", context.DeadlineExceeded, false, false},
		{"no error", nil, false, false},
	} {
		if got := refusedBeforeSend(tt.err, tt.wrote); got != tt.want {
			t.Errorf("%s: %v, want %v (err %v)", tt.name, got, tt.want, tt.err)
		}
	}
}
