package runner

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/memory"
)

// minuteAt1ms is one minute of 1 ms samples in a timeline: every source moving by more than
// memory.TimelineStepMiB at every sample when busy (the worst case), else a GPU that holds
// still while host memory moves every 10 ms (the sampler's host interval).
func minuteAt1ms(busy bool) memory.Timeline {
	tl := memory.Timeline{Start: time.Unix(0, 0), Interval: time.Millisecond}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 60_000 {
		var p memory.TimelinePoint
		p.Has = [memory.TimelineSources]bool{true, true, true}
		p.MiB = [memory.TimelineSources]float32{40960, 38912, 2048}
		if busy {
			for s := range p.MiB {
				p.MiB[s] += 100 * rng.Float32()
			}
		} else {
			p.MiB[memory.TimelineHost] += float32(i / 10 % 50)
		}
		tl.Add(time.Duration(i)*time.Millisecond, p)
	}
	return tl
}

// TestTimelineBytesPerMinute: what a minute of 1 ms sampling costs in the timeline file,
// and that the file is bounded whatever the samples do (docs/results.md states the numbers).
func TestTimelineBytesPerMinute(t *testing.T) {
	marks := []memoryMark{{caseID: "c", start: time.Unix(0, 0), end: time.Unix(60, 0)}}
	for _, tc := range []struct {
		name string
		busy bool
	}{{"every source changes every sample", true}, {"GPU still, host moving by 1 MiB every 10 ms", false}} {
		tl := minuteAt1ms(tc.busy)
		b := encodeTimeline("01-s", tl, marks, 0)
		var v struct {
			Points [][4]*float64 `json:"points"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: the timeline is not JSON: %v", tc.name, err)
		}
		if len(v.Points) != len(tl.Points) {
			t.Errorf("%s: %d points written, %d kept", tc.name, len(v.Points), len(tl.Points))
		}
		// A point is at most 48 bytes as written ([ms with 3 decimals, three MiB with 1]).
		if bound := memory.DefaultTimelinePoints*48 + 1024; len(b) > bound {
			t.Errorf("%s: %d bytes, over the bound of %d", tc.name, len(b), bound)
		}
		t.Logf("%s: one minute at 1 ms: %d samples, %d points, bucket %s, %d bytes", tc.name, tl.Samples, len(tl.Points), tl.Width, len(b))
	}
	if b := encodeTimeline("01-s", memory.Timeline{Start: time.Unix(0, 0)}, nil, 0); !strings.HasSuffix(string(b), "\"points\":[]}\n") {
		t.Errorf("an empty timeline: %s", b)
	}
}
