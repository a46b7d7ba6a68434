package runner

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"
)

// endless is a body that never ends.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'A'
	}
	return len(p), nil
}

// TestReadCappedHoldsToTheCap: an endless body stopped at the cap has cost
// the cap and one chunk, not the 2.3–4.6× of io.ReadAll's growth; a body under the cap comes
// back whole, with or without its length known.
func TestReadCappedHoldsToTheCap(t *testing.T) {
	const limit = 64 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := readCapped(&limitedBody{r: endless{}, left: limit}, -1)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, errTooLarge) {
		t.Fatalf("endless body: %v, want errTooLarge", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > limit+2*readChunk+64<<10 {
		t.Errorf("an endless body allocated %d MiB for a cap of %d MiB", got>>20, limit>>20)
	}
	for _, size := range []int{0, 10, readChunk - 1, readChunk, 3*readChunk + 7, limit} {
		body := bytes.Repeat([]byte("x"), size)
		for _, known := range []int64{-1, int64(size)} {
			got, err := readCapped(&limitedBody{r: bytes.NewReader(body), left: limit}, known)
			if err != nil || !bytes.Equal(got, body) {
				t.Errorf("a body of %d bytes (length %d): %d bytes back, %v", size, known, len(got), err)
			}
		}
	}
	over := &limitedBody{r: io.MultiReader(bytes.NewReader(make([]byte, limit)), bytes.NewReader([]byte("!"))), left: limit}
	if _, err := readCapped(over, -1); !errors.Is(err, errTooLarge) {
		t.Errorf("one byte past the cap: %v", err)
	}
}
