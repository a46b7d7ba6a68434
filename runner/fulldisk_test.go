//go:build linux

package runner

import (
	"os"
	"strings"
	"testing"
)

// TestServerLogFullDiskKeepsDraining: when server.log cannot be written the output is still
// read (Write never fails, so the pipe never backs up and the server never gets SIGPIPE), the
// readiness marker and crash lines are still seen, and what was dropped is counted.
func TestServerLogFullDiskKeepsDraining(t *testing.T) {
	f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	l := newLogWatch(f, "Application startup complete.")
	total := 0
	for _, chunk := range []string{"INFO loading\n", "INFO: Application startup complete.\n", "Fatal Python error: Aborted\n"} {
		n, err := l.Write([]byte(chunk))
		if err != nil || n != len(chunk) {
			t.Fatalf("Write = %d, %v: a failing log file must not stop the draining", n, err)
		}
		total += n
	}
	select {
	case <-l.ready:
	default:
		t.Error("marker not seen while the log file is full")
	}
	if l.fatalLine() == "" {
		t.Error("crash line not seen while the log file is full")
	}
	got := l.unsaved()
	if !strings.Contains(got, "bytes of server output could not be written") || !strings.Contains(got, "no space left on device") {
		t.Errorf("unsaved() = %q", got)
	}
	if l.dropped != int64(total) {
		t.Errorf("dropped %d bytes, want %d", l.dropped, total)
	}
	l.close()
}
