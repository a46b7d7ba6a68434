package memory

import (
	"slices"
	"time"
)

// The sources a timeline point holds, in this order.
const (
	TimelineDevice  = iota // NVML used memory, every GPU summed (nvml_device)
	TimelineProcess        // NVML per-process memory of the server's tree, summed (nvml_process)
	TimelineHost           // anonymous resident memory of the tree (host_anon)
	TimelineSources
)

// DefaultTimelinePoints bounds a timeline: 8,192 points, about 200 KiB in memory and 300 KB
// as written (docs/gpu.md, "Memory over time").
const DefaultTimelinePoints = 8192

// TimelineStepMiB is the smallest change that starts a new point at full resolution: a step
// below it is not visible in a picture of GiB, and host memory moves by pages all the time.
const TimelineStepMiB = 1

// TimelinePoint is the memory of a process tree from At on, until the next point: at full
// resolution, a sample that changed some source by at least TimelineStepMiB; once the
// timeline was downsampled, the highest value of each source within one bucket (Width) that
// starts at At, so that no peak is lost, only its duration.
type TimelinePoint struct {
	At time.Duration
	// MiB is the value of each source (TimelineDevice, ...); Has says which were measured.
	MiB [TimelineSources]float32
	Has [TimelineSources]bool
}

// Timeline is a bounded record of a session's samples: change points at the sampler's
// resolution while they fit in Max points, then buckets of doubling width. It is not safe
// for concurrent use; the sampler adds to it under its own lock and hands out copies.
type Timeline struct {
	// Start is when the session began; every At counts from it.
	Start time.Time
	// Interval is the sampler's resolution; Width is 0 while the timeline holds change points
	// at that resolution, else the width of a bucket.
	Interval, Width time.Duration
	// Max bounds Points (DefaultTimelinePoints when 0 at the first Add).
	Max    int
	Points []TimelinePoint
	// Samples counts every sample added, kept or merged.
	Samples int
}

// Add records one sample taken at at (from Start).
func (t *Timeline) Add(at time.Duration, p TimelinePoint) {
	if t.Max <= 0 {
		t.Max = DefaultTimelinePoints
	}
	t.Samples++
	p.At = at
	n := len(t.Points)
	if n > 0 {
		last := &t.Points[n-1]
		switch {
		case t.Width > 0 && at/t.Width == last.At/t.Width:
			merge(last, p)
			return
		case t.Width > 0:
			p.At = at / t.Width * t.Width
		}
		if same(*last, p) {
			return
		}
	}
	t.Points = append(t.Points, p)
	if len(t.Points) >= t.Max {
		t.compact()
	}
}

// compact doubles the bucket width until the points fill at most half of Max.
func (t *Timeline) compact() {
	for len(t.Points) > t.Max/2 {
		t.Width = max(2*t.Width, 2*max(t.Interval, time.Microsecond))
		out := t.Points[:0]
		for _, p := range t.Points {
			p.At = p.At / t.Width * t.Width
			if k := len(out); k > 0 && out[k-1].At == p.At {
				merge(&out[k-1], p)
				continue
			}
			out = append(out, p)
		}
		t.Points = out
	}
}

// Clone is a copy that shares nothing with t.
func (t *Timeline) Clone() Timeline {
	c := *t
	c.Points = slices.Clone(t.Points)
	return c
}

// merge folds p into the bucket b: the highest value of each source.
func merge(b *TimelinePoint, p TimelinePoint) {
	for i := range TimelineSources {
		if p.Has[i] && (!b.Has[i] || p.MiB[i] > b.MiB[i]) {
			b.MiB[i], b.Has[i] = p.MiB[i], true
		}
	}
}

// same says whether p adds nothing to the step that last began: the same sources, none moved
// by TimelineStepMiB or more.
func same(last, p TimelinePoint) bool {
	for i := range TimelineSources {
		if last.Has[i] != p.Has[i] {
			return false
		}
		if d := p.MiB[i] - last.MiB[i]; p.Has[i] && (d >= TimelineStepMiB || d <= -TimelineStepMiB) {
			return false
		}
	}
	return true
}

// Recorder is a Session that keeps its timeline (internal/gpumem's does).
type Recorder interface {
	// Timeline is a copy of the timeline so far.
	Timeline() Timeline
}
