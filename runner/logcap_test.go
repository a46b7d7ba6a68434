package runner

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServerLogIsCapped: a server that writes far more than the caps, and
// a line far longer than logLineBytes, leaves a server.log of at most the head, the tail
// and the cut notes: its first logHeadBytes as written, a line saying how many bytes were
// cut there, and its last lines; the long line keeps its start and says how much of it was
// cut. The watch still sees the marker written after the flood, and the run's note says what
// was cut.
func TestServerLogIsCapped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	l := newLogWatch(f, "ready to roll")
	var mirror bytes.Buffer
	l.mirror = &mirror
	// A line of 3 × logLineBytes, written in pieces.
	long := strings.Repeat("=", logLineBytes)
	for range 3 {
		mustWrite(t, l, []byte(long))
	}
	mustWrite(t, l, []byte(" end\n"))
	const lineLen = 1 << 10
	line := func(i int) []byte {
		s := fmt.Sprintf("flood %d ", i)
		return []byte(s + strings.Repeat("-", lineLen-len(s)-1) + "\n")
	}
	n := (logHeadBytes+logTailBytes)/lineLen*2 + 123 // twice the caps, and not a multiple of a line
	for i := range n {
		mustWrite(t, l, line(i))
	}
	mustWrite(t, l, []byte("INFO The server is fired up and ready to roll!\n"))
	select {
	case <-l.ready:
	default:
		t.Error("the marker after the flood was not seen")
	}
	l.close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if limit := int64(logHeadBytes + logTailBytes + 1024); int64(len(b)) > limit {
		t.Errorf("server.log is %d bytes, want at most %d", len(b), limit)
	}
	first, _, _ := bytes.Cut(b, []byte("\n"))
	if want := long + fmt.Sprintf(" … [diffusion-check: %d bytes of this line cut, past 64 KiB]", 2*logLineBytes+4); string(first) != want {
		t.Errorf("the long line is %d bytes ending %q, want its first 64 KiB and the cut note", len(first), first[max(0, len(first)-80):])
	}
	if !bytes.HasPrefix(b[len(first)+1:], line(0)) {
		t.Error("the head does not go on with the first flood line")
	}
	if !bytes.HasSuffix(b, append(line(n-1), "INFO The server is fired up and ready to roll!\n"...)) {
		t.Errorf("the tail does not end with the last lines: %q", b[len(b)-200:])
	}
	if !bytes.Contains(b, []byte(" bytes of server output cut here: server.log keeps the first 16 MiB and the last 16 MiB]\n")) {
		t.Error("no line says where the log was cut")
	}
	note := l.cutNote()
	for _, want := range []string{"the log keeps its first 16 MiB and its last 16 MiB", "1 lines longer than 64 KiB kept their first 64 KiB"} {
		if !strings.Contains(note, want) {
			t.Errorf("cut note %q lacks %q", note, want)
		}
	}
	if !strings.Contains(mirror.String(), "the server log is past 16 MiB; the rest is not shown here") || mirror.Len() > logHeadBytes+logHeadBytes/8 {
		t.Errorf("the mirror holds %d bytes and does not say it stopped", mirror.Len())
	}
}

// mustWrite writes b to w and fails the test on an error.
func mustWrite(t *testing.T, w io.Writer, b []byte) {
	t.Helper()
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
}
