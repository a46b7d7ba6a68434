package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/suite"
)

func TestLogWatch(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	l := newLogWatch(f, "Application startup complete.")
	// Lines arrive in arbitrary chunks, as from a pipe.
	for _, chunk := range []string{"INFO loading\nINFO: Applica", "tion startup complete.\r\n", "x\n"} {
		if _, err := l.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-l.ready:
	default:
		t.Fatal("marker split across writes was not seen")
	}
	if got := l.fatalLine(); got != "" {
		t.Fatalf("fatal line %q before any crash", got)
	}
	if _, err := l.Write([]byte("  Fatal Python error: Segmentation fault\nmore\n")); err != nil {
		t.Fatal(err)
	}
	if got, want := l.fatalLine(), "Fatal Python error: Segmentation fault"; got != want {
		t.Errorf("fatal line %q, want %q", got, want)
	}
	for i := range 100 {
		fmt.Fprintf(l, "line %d\n", i)
	}
	if _, err := l.Write([]byte("no newline at the end")); err != nil {
		t.Fatal(err)
	}
	l.close()
	tail := l.lastLines(3)
	if diff := cmp.Diff([]string{"line 98", "line 99", "no newline at the end"}, tail); diff != "" {
		t.Errorf("tail (-want +got):\n%s", diff)
	}
	if n := len(l.lastLines(1000)); n != tailLines {
		t.Errorf("kept %d lines, want %d", n, tailLines)
	}
	b, _ := os.ReadFile(f.Name())
	if !strings.HasPrefix(string(b), "INFO loading\n") || !strings.HasSuffix(string(b), "no newline at the end") {
		t.Errorf("log file does not hold the whole output: %q...", b[:min(len(b), 40)])
	}
}

func TestLogWatchLongLine(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	l := newLogWatch(f, "ready")
	if _, err := l.Write([]byte(strings.Repeat("x", 100<<10))); err != nil {
		t.Fatal(err)
	}
	if len(l.part) != 0 || len(l.lastLines(1)) != 1 {
		t.Errorf("an endless line is buffered without bound: %d bytes pending", len(l.part))
	}
	l.close()
}

// A start that fails once server.log is open must close it: a run starts a server per
// case, and every one leaked would hold a descriptor for the rest of the run.
func TestFailedStartClosesServerLog(t *testing.T) {
	if _, err := os.ReadDir("/proc/self/fd"); err != nil {
		t.Skipf("no /proc/self/fd to see open files by: %v", err)
	}
	dir := t.TempDir()
	spec := &suite.Server{Name: "missing", Command: []string{filepath.Join(dir, "no-such-server"), "--port", "{port}"}}
	if _, err := startServer(spec, serverEnv{dir: dir, suiteDir: t.TempDir(), environ: os.Environ()}); err == nil {
		t.Fatal("a server whose executable does not exist started")
	}
	log := filepath.Join(dir, "server.log")
	if _, err := os.Stat(log); err != nil {
		t.Fatalf("the failed start never opened its log, so this test checks nothing: %v", err)
	}
	open, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range open {
		if target, _ := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); target == log {
			t.Errorf("fd %s still open on %s after the failed start", fd.Name(), log)
		}
	}
}
