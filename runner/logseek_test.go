package runner

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestLogSeek: a watch sees only the lines written after it began; it ends once every marker
// was seen, over several lines and writes, or at a failing line; unseek says what it missed.
func TestLogSeek(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	l := newLogWatch(f, "")
	defer l.close()
	mustWrite(t, l, []byte("old: marker A\n"))
	k := l.seek("FAILED", "marker A", "marker B")
	mustWrite(t, l, []byte("INFO marker "))
	mustWrite(t, l, []byte("A here\n"))
	select {
	case <-k.done:
		t.Fatal("the watch ended with one of its two markers")
	default:
	}
	if missing, failed := l.unseek(k); !slices.Equal(missing, []string{"marker B"}) || failed != "" {
		t.Errorf("after one marker: missing %q, failed %q; want marker B missing, no failure", missing, failed)
	}
	k = l.seek("FAILED", "marker A", "marker B")
	mustWrite(t, l, []byte("marker B\nmarker A\n"))
	<-k.done
	if missing, _ := l.unseek(k); len(missing) > 0 {
		t.Errorf("both markers written: missing %q", missing)
	}
	k = l.seek("FAILED", "marker A")
	mustWrite(t, l, []byte("ERROR batch FAILED: x  \nmarker A\n"))
	<-k.done
	if missing, failed := l.unseek(k); failed != "ERROR batch FAILED: x" || len(missing) != 1 {
		t.Errorf("a failing line: missing %q, failed %q", missing, failed)
	}
}
