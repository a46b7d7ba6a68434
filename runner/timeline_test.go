package runner

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/memory"
	"github.com/diffusion-check/diffusion-check/results"
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

// TestMemoryChart: the picture of a failing nvml_process peak shades its request, draws its
// limit, and rings the highest sample inside the request, not the higher one outside it.
func TestMemoryChart(t *testing.T) {
	start := time.Unix(1000, 0)
	tl := memory.Timeline{Start: start, Interval: time.Millisecond}
	add := func(ms int, proc float32) {
		tl.Add(time.Duration(ms)*time.Millisecond,
			memory.TimelinePoint{MiB: [memory.TimelineSources]float32{0, proc, 0}, Has: [memory.TimelineSources]bool{false, true, false}})
	}
	add(0, 1000)
	add(50, 9000) // a spike in the load, outside the failing window
	add(60, 4000)
	add(120, 6000) // request 2's spike
	add(125, 4000)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	marks := []memoryMark{
		{caseID: "c", start: at(0), end: at(80)},
		{caseID: "c", index: 1, start: at(90), end: at(100), reported: map[string]float64{checks.SourceServerReserved: 3000}},
		{caseID: "c", index: 2, start: at(110), end: at(130)},
	}
	ck := results.Check{Name: checks.MemoryRuntimePeak, Status: results.Fail, Source: checks.SourceNVMLProcess, Value: checks.Float(6000),
		Limit: checks.Float(5000), Cause: "memory grows"}
	m := memoryChart("c", failedMemory{check: ck, at: slot{index: 2, of: 2}}, tl, marks, 2)
	if m.Title != "c request 2/2: memory.runtime_peak (nvml_process) 6000 MiB, limit 5000 MiB" || m.Limit != 5000 {
		t.Errorf("title %q, limit %g", m.Title, m.Limit)
	}
	if m.Failing.StartMs != 110 || m.Failing.EndMs != 130 || len(m.Windows) != 3 || len(m.Series) != 1 || len(m.Reported) != 1 {
		t.Errorf("failing %+v, %d windows, %d series, %d reported", m.Failing, len(m.Windows), len(m.Series), len(m.Reported))
	}
	if m.Spike == nil || m.Spike.MiB != 6000 || m.Spike.Ms != 120 || m.SpikeLabel != "nvml_process peak" {
		t.Errorf("spike %+v %q, want 6000 MiB at 120 ms", m.Spike, m.SpikeLabel)
	}
	// A server-reported source: the reported value, in the middle of the window.
	ck.Source = checks.SourceServerReserved
	m = memoryChart("c", failedMemory{check: ck, at: slot{index: 2, of: 2}}, tl, marks, 2)
	if m.Spike == nil || m.Spike.MiB != 6000 || m.Spike.Ms != 120 || m.SpikeLabel != "server_reserved reported" {
		t.Errorf("reported spike %+v %q", m.Spike, m.SpikeLabel)
	}
	// A confirmation request is named as the progress lines name it.
	m = memoryChart("c", failedMemory{check: ck, at: slot{index: 1, of: 2, confirm: true}}, tl, marks, 2)
	if !strings.HasPrefix(m.Title, "c confirmation request 1/2: memory.runtime_peak (server_reserved)") {
		t.Errorf("a confirmation request's title %q", m.Title)
	}
}
