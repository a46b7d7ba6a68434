package memory

import (
	"math/rand/v2"
	"testing"
	"time"
)

func dev(v float32) TimelinePoint {
	return TimelinePoint{MiB: [TimelineSources]float32{TimelineDevice: v}, Has: [TimelineSources]bool{TimelineDevice: true}}
}

// peak is the highest device value of t, and when its point starts.
func peak(t *Timeline) (float32, time.Duration) {
	var v float32
	var at time.Duration
	for _, p := range t.Points {
		if p.Has[TimelineDevice] && p.MiB[TimelineDevice] > v {
			v, at = p.MiB[TimelineDevice], p.At
		}
	}
	return v, at
}

func TestTimelineKeepsChangePointsAtFullResolution(t *testing.T) {
	tl := Timeline{Interval: time.Millisecond}
	for i := range 1000 {
		v := float32(4096)
		if i >= 500 && i < 502 { // a 2 ms spike
			v = 24576
		}
		v += float32(i%3) * 0.1 // below TimelineStepMiB: no new point
		tl.Add(time.Duration(i)*time.Millisecond, dev(v))
	}
	if len(tl.Points) != 3 || tl.Width != 0 || tl.Samples != 1000 {
		t.Fatalf("%d points, width %s, %d samples; want 3 change points at full resolution of 1000 samples", len(tl.Points), tl.Width, tl.Samples)
	}
	if v, at := peak(&tl); v < 24576 || v > 24577 || at != 500*time.Millisecond || tl.Points[2].At != 502*time.Millisecond {
		t.Errorf("spike %g MiB at %s, back at %s; want 24576 at 500ms, back at 502ms", v, at, tl.Points[2].At)
	}
}

// TestTimelineIsBoundedAndKeepsThePeak: ten minutes of a value that changes at every 1 ms
// sample never hold more than Max points, and the 2 ms spike survives every compaction
// with its height, in a bucket that covers it.
func TestTimelineIsBoundedAndKeepsThePeak(t *testing.T) {
	tl := Timeline{Interval: time.Millisecond, Max: 1024}
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 600_000
	spikeAt := 431_234 * time.Millisecond
	for i := range n {
		at := time.Duration(i) * time.Millisecond
		v := 4096 + 100*rng.Float32()
		if at >= spikeAt && at < spikeAt+2*time.Millisecond {
			v = 30000
		}
		tl.Add(at, dev(v))
		if len(tl.Points) >= tl.Max {
			t.Fatalf("sample %d: %d points, Max %d", i, len(tl.Points), tl.Max)
		}
	}
	v, at := peak(&tl)
	if v != 30000 || at > spikeAt || at+tl.Width <= spikeAt {
		t.Errorf("peak %g MiB in the bucket at %s (width %s), want 30000 in the bucket holding %s", v, at, tl.Width, spikeAt)
	}
	if tl.Width < time.Second || tl.Width > 2*time.Second {
		t.Errorf("width %s after 10 minutes in 1024 points, want between 1 s and 2 s", tl.Width)
	}
}

func TestTimelineSourcesComeAndGo(t *testing.T) {
	tl := Timeline{Interval: time.Millisecond}
	tl.Add(0, dev(100))
	host := TimelinePoint{MiB: [TimelineSources]float32{TimelineDevice: 100, TimelineHost: 50},
		Has: [TimelineSources]bool{TimelineDevice: true, TimelineHost: true}}
	tl.Add(time.Millisecond, host)
	tl.Add(2*time.Millisecond, host)
	tl.Add(3*time.Millisecond, dev(100))
	if len(tl.Points) != 3 {
		t.Errorf("%d points, want 3 (a source that appears or goes is a change)", len(tl.Points))
	}
	c := tl.Clone()
	c.Points[0].MiB[0] = 1
	if tl.Points[0].MiB[0] != 100 {
		t.Error("Clone shares its points")
	}
}
