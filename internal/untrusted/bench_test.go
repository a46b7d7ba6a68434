package untrusted

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// BenchmarkWriter is the cost of a log line through a Writer: a server's flood of 1 KiB
// lines passes at this rate.
func BenchmarkWriter(b *testing.B) {
	line := []byte(strings.Repeat("WARNING flood line (fault log-flood) ", 27) + "\n")
	block := bytes.Repeat(line, 1024)
	w := NewWriter(io.Discard)
	b.SetBytes(int64(len(block)))
	for b.Loop() {
		if _, err := w.Write(block); err != nil {
			b.Fatal(err)
		}
	}
}
