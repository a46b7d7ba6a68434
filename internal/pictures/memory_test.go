package pictures

import (
	"math"
	"strings"
	"testing"
)

func TestRenderMemory(t *testing.T) {
	m := Memory{
		Title:    "spike request 2/3: memory.runtime_peak (host_anon) 259 MiB, limit 258 MiB",
		Series:   []MemoryLine{{Label: "host_anon", Samples: []Sample{{0, 2}, {600, 259}, {1100, 2}}}},
		Reported: []Reported{{Label: "server_reserved", Spans: []Span{{StartMs: 100, EndMs: 400, MiB: 3396}, {StartMs: 500, EndMs: 1100, MiB: 3652}}}},
		Windows:  []Span{{Label: "load", StartMs: 0, EndMs: 90}, {Label: "request 1", StartMs: 100, EndMs: 400}, {Label: "request 2", StartMs: 500, EndMs: 1100}},
		Failing:  Span{Label: "failing window: request 2", StartMs: 500, EndMs: 1100},
		Limit:    258, LimitLabel: "limit", Spike: &Sample{600, 259}, SpikeLabel: "host_anon peak",
	}
	img, err := RenderMemory(m)
	if err != nil {
		t.Fatal(err)
	}
	// The failing window is shaded red, and the limit drawn in its colour.
	var shaded, limit int
	for y := img.Rect.Min.Y; y < img.Rect.Max.Y; y++ {
		for x := img.Rect.Min.X; x < img.Rect.Max.X; x++ {
			switch img.RGBAAt(x, y) {
			case failShade:
				shaded++
			case limitColour:
				limit++
			}
		}
	}
	if shaded < 1000 || limit < 100 {
		t.Errorf("%d pixels of the failing window's shade, %d of the limit: want both drawn", shaded, limit)
	}
	m.Series[0].Samples[1].MiB = math.NaN()
	if _, err := RenderMemory(m); err == nil || !strings.Contains(err.Error(), "a sample at 600 ms") {
		t.Errorf("a NaN sample: %v, want an error naming it", err)
	}
	if got := niceCeil(3652 * 1.08); got != 5000 {
		t.Errorf("niceCeil = %g, want 5000", got)
	}
}

// TestRenderMemoryView: with a view, the time axis covers it alone: a failing request of 30 ms
// after a load of seconds fills most of the plot instead of a sliver at its edge.
func TestRenderMemoryView(t *testing.T) {
	m := Memory{
		Title:   "spike request 3/4: memory.runtime_peak (nvml_process) 12192 MiB",
		Series:  []MemoryLine{{Label: "nvml_process", Samples: []Sample{{0, 0}, {300, 4000}, {2830, 12192}, {2862, 4000}}}},
		Windows: []Span{{Label: "load", StartMs: 0, EndMs: 2800}, {Label: "request 2", StartMs: 2805, EndMs: 2825}, {Label: "request 3", StartMs: 2828, EndMs: 2860}},
		Failing: Span{Label: "failing window: request 3", StartMs: 2828, EndMs: 2860},
		Limit:   4080, LimitLabel: "limit",
	}
	shadedWidth := func(m Memory) int {
		img, err := RenderMemory(m)
		if err != nil {
			t.Fatal(err)
		}
		cols := 0
		for x := img.Rect.Min.X; x < img.Rect.Max.X; x++ {
			for y := img.Rect.Min.Y; y < img.Rect.Max.Y; y++ {
				if img.RGBAAt(x, y) == failShade {
					cols++
					break
				}
			}
		}
		return cols
	}
	whole := shadedWidth(m)
	m.View = Span{StartMs: 2800, EndMs: 2866}
	zoomed := shadedWidth(m)
	// Each count includes the legend's 20-pixel swatch.
	if whole > 40 || zoomed < 300 {
		t.Errorf("the failing window is %d pixels wide over the whole timeline and %d in the view, want a sliver, then 300 or more of %d", whole, zoomed, memW)
	}
}
