package baselines

import (
	"fmt"
	"math"
	"strings"

	"github.com/diffusion-check/diffusion-check/checks"
)

// fileKey is the key of a baseline file that a metric is checked against, the metric named
// as in a spread file (SpreadKey: the check name, and a memory source after "/"):
// "perf.e2e" → "expected_e2e_ms", "perf.stage.DenoisingStage" → "stages_ms.DenoisingStage",
// "memory.runtime_peak/server_reserved" → "runtime_peak_vram_mb". It returns "" for a metric
// no key of the file holds (a per-frame time, a sampler note, a device-wide NVML peak).
func fileKey(metric string) string {
	name, src, _ := strings.Cut(metric, "/")
	switch name {
	case checks.PerfE2E:
		return "expected_e2e_ms"
	case checks.PerfDenoiseAvg:
		return "expected_avg_denoise_ms"
	case checks.PerfDenoiseMedian:
		return "expected_median_denoise_ms"
	case checks.PerfLoad:
		return "expected_load_ms"
	case checks.MemoryLoadPeak, checks.MemoryRuntimePeak, checks.MemoryWarmupPeak:
		phase := strings.TrimPrefix(name, "memory.")
		switch src {
		case checks.SourceServerReserved, checks.SourceNVMLProcess:
			return phase + "_vram_mb"
		case checks.SourceServerAllocated:
			if name != checks.MemoryWarmupPeak {
				return phase + "_allocated_mb"
			}
		case checks.SourceHostAnon, checks.SourceServerHostAnon:
			if name != checks.MemoryWarmupPeak {
				return phase + "_host_anon_mb"
			}
		}
		return ""
	}
	if st, ok := strings.CutPrefix(name, checks.PerfStagePrefix); ok && st != "" && st != checks.PerFrameGeneration {
		return "stages_ms." + st
	}
	return ""
}

// Value returns the value f holds for a metric (named as fileKey takes it) of scenario id,
// and whether it holds one.
func (f *File) Value(id, metric string) (float64, bool) {
	s := f.Scenarios[id]
	key := fileKey(metric)
	if s == nil || key == "" {
		return 0, false
	}
	if st, ok := strings.CutPrefix(key, "stages_ms."); ok {
		v, ok := s.Stages.Get(st)
		return v, ok && !math.IsNaN(v)
	}
	p := map[string]*float64{
		"expected_e2e_ms":            s.E2EMs,
		"expected_avg_denoise_ms":    s.AvgDenoiseMs,
		"expected_median_denoise_ms": s.MedianDenoiseMs,
		"expected_load_ms":           s.ExpectedLoadMs,
		"load_peak_vram_mb":          s.LoadPeakVRAMMiB,
		"runtime_peak_vram_mb":       s.RuntimePeakVRAMMiB,
		"warmup_peak_vram_mb":        s.WarmupPeakVRAMMiB,
		"load_peak_allocated_mb":     s.LoadPeakAllocatedMiB,
		"runtime_peak_allocated_mb":  s.RuntimePeakAllocatedMiB,
		"load_peak_host_anon_mb":     s.LoadPeakHostAnonMiB,
		"runtime_peak_host_anon_mb":  s.RuntimePeakHostAnonMiB,
	}[key]
	if p == nil {
		return 0, false
	}
	return *p, true
}

// Tighten writes the given values (Change.Scenario, a Metric as fileKey takes it, New) into
// a copy of base, where the file holds them already: in the scenario, or in a top-level
// memory map when the scenario keeps its peak there. Nothing else changes: tolerances,
// metadata, key order and every other value stay byte for byte. The changes it returns name
// the file's keys, Old as the file had it and New as written (rounded as SGLang writes).
// A metric the file does not hold, or two values for one key, is an error: tightening
// proposes changes to existing values only.
func Tighten(base *File, set []Change) (*Regenerated, error) {
	d, err := parseJSON(base.Path, base.Marshal())
	if err != nil {
		return nil, err
	}
	out := &Regenerated{}
	written := map[string]string{}
	for _, c := range set {
		key := fileKey(c.Metric)
		old, ok := base.Value(c.Scenario, c.Metric)
		if !ok {
			return nil, fmt.Errorf("scenario %s %s: not a value of %s", c.Scenario, c.Metric, base.Path)
		}
		if !(c.New > 0) || math.IsInf(c.New, 0) {
			return nil, fmt.Errorf("scenario %s %s: new value %g is not a measurement", c.Scenario, c.Metric, c.New)
		}
		at := c.Scenario + "\x00" + key
		if prev, dup := written[at]; dup {
			return nil, fmt.Errorf("scenario %s: %s and %s both set %s", c.Scenario, prev, c.Metric, key)
		}
		written[at] = c.Metric
		v := ms2(c.New)
		sc := d.get("scenarios").get(c.Scenario)
		switch st, isStage := strings.CutPrefix(key, "stages_ms."); {
		case isStage:
			sc.get("stages_ms").set(st, numberNode(v))
		case sc != nil && sc.get(key) != nil:
			sc.set(key, numberNode(v))
		default: // a memory peak kept in the top-level map (Parse merged it into the scenario)
			d.get(key).set(c.Scenario, numberNode(v))
		}
		out.Changes = append(out.Changes, Change{Scenario: c.Scenario, Metric: key, Old: old, New: v})
	}
	f, err := Parse(base.Path, d.marshal())
	if err != nil {
		return nil, fmt.Errorf("tightened file does not read back: %w", err)
	}
	out.File = f
	return out, nil
}
