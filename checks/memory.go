package checks

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/diffusion-check/diffusion-check/results"
)

// Memory check names.
const (
	MemoryLoadPeak    = "memory.load_peak"
	MemoryRuntimePeak = "memory.runtime_peak"
	// MemoryWarmupPeak checks the server's warm-up peak, only where the baseline has
	// warmup_peak_vram_mb.
	MemoryWarmupPeak = "memory.warmup_peak"
)

// Memory sources: the labels of RequestResult.PeakVRAMMiB and Load.PeakVRAMMiB, the one set
// that internal/perflog (server_*) and internal/gpumem (nvml_*, host_anon) label peaks with.
const (
	SourceServerReserved  = "server_reserved"
	SourceServerAllocated = "server_allocated"
	SourceServerHostAnon  = "server_host_anon"
	SourceNVMLProcess     = "nvml_process"
	SourceNVMLDevice      = "nvml_device"
	SourceHostAnon        = "host_anon"
)

// Memory tolerances of SGLang's VRAM guard (PR #35511), used when a baseline file's profile has none; host
// anonymous memory gets a pad on top of the runtime tolerance.
const (
	DefaultLoadPeakTolerance    = 0.01
	DefaultRuntimePeakTolerance = 0.02
	hostAnonPadMiB              = 256.0
	// vramPadMiB is the pad of SGLang's VRAM limits (PR #35511): max(b × (1 + tol), b + 128).
	vramPadMiB = 128.0
)

// MemoryBaseline holds one scenario's memory baselines in MiB (NaN: the file has none) and
// the tolerances in force.
type MemoryBaseline struct {
	LoadPeakMiB         float64 // load_peak_vram_mb: the server's reserved peak while loading
	RuntimePeakMiB      float64 // runtime_peak_vram_mb: the server's reserved peak in a request
	LoadAllocatedMiB    float64 // load_peak_allocated_mb
	RuntimeAllocatedMiB float64 // runtime_peak_allocated_mb
	LoadHostAnonMiB     float64 // load_peak_host_anon_mb
	RuntimeHostAnonMiB  float64 // runtime_peak_host_anon_mb
	WarmupPeakMiB       float64 // warmup_peak_vram_mb
	LoadTol             float64
	RuntimeTol          float64
}

// NoMemoryBaseline is a MemoryBaseline without values and with the default tolerances: what
// applies to a case whose suite has no baselines, so that growth is still watched.
func NoMemoryBaseline() MemoryBaseline {
	nan := math.NaN()
	return MemoryBaseline{nan, nan, nan, nan, nan, nan, nan, DefaultLoadPeakTolerance, DefaultRuntimePeakTolerance}
}

// LoadMemory checks the peaks of one server start (Load.PeakVRAMMiB) against the load
// baselines, as SGLang's load-peak VRAM guard does (PR #35511): the reserved peak against
// load_peak_vram_mb with the load_peak_vram tolerance and a 128 MiB pad. SGLang enforces the
// allocated peak only at runtime, so a load_peak_allocated_mb baseline is reported beside it,
// not enforced. See memoryChecks for the other sources.
func LoadMemory(peaks map[string]float64, b MemoryBaseline) []results.Check {
	return memoryChecks(MemoryLoadPeak, "load_peak", peaks, b.LoadPeakMiB, b.LoadAllocatedMiB, b.LoadHostAnonMiB, b.LoadTol, false)
}

// RuntimeMemory checks one request's peaks against the runtime baselines, as SGLang's runtime
// VRAM guard does (PR #35511, PR #38172): against runtime_peak_vram_mb with the
// runtime_peak_vram tolerance and a 128 MiB pad; when the scenario has a
// runtime_peak_allocated_mb baseline, the allocated peak is enforced against it and the
// reserved peak is only reported. See memoryChecks for the other sources.
func RuntimeMemory(peaks map[string]float64, b MemoryBaseline) []results.Check {
	return memoryChecks(MemoryRuntimePeak, "runtime_peak", peaks, b.RuntimePeakMiB, b.RuntimeAllocatedMiB, b.RuntimeHostAnonMiB, b.RuntimeTol, true)
}

// WarmupMemory checks the server's warm-up peak (the reserved peak of the record's
// warmup_peak snapshot) against warmup_peak_vram_mb with the runtime tolerance and the
// 128 MiB pad, as SGLang does when that key is in the baseline (PR #35511). Without the key
// there is no check; with it, a missing or zero peak fails ("peak VRAM metric missing").
func WarmupMemory(peaks map[string]float64, b MemoryBaseline) []results.Check {
	if math.IsNaN(b.WarmupPeakMiB) {
		return nil
	}
	v, ok := peaks[SourceServerReserved]
	if !ok {
		v = math.NaN()
	}
	c := memCheck(MemoryWarmupPeak, SourceServerReserved, v, b.WarmupPeakMiB, b.RuntimeTol, vramPadMiB, "warmup_peak_vram_mb")
	return []results.Check{c}
}

// memoryChecks makes one check per source present, each labelled with its Source:
//   - server_reserved against <phase>_vram_mb (what SGLang's baseline means: the reserved peak
//     of the server's memory_snapshots), with the 128 MiB pad; reported only (a skip that
//     keeps value and limit) when allocEnforced and a <phase>_allocated_mb baseline exists;
//   - server_allocated against <phase>_allocated_mb, only when that baseline exists: enforced
//     when allocEnforced, else reported;
//   - nvml_process against <phase>_vram_mb only when the server reported neither peak
//     (an older server: NVML is then the only VRAM number); otherwise recorded as a skip,
//     since NVML also counts the CUDA context and would never fit a reserved-memory baseline;
//   - nvml_device recorded as a skip (it counts every process on the GPU);
//   - host_anon and server_host_anon against <phase>_host_anon_mb with a 256 MiB pad.
//
// A VRAM baseline with no VRAM measurement at all fails ("peak VRAM metric missing"); no
// baseline means "recorded, not checked" (skip with the value). Per-GPU sources
// ("nvml_process:1") are left to the totals.
func memoryChecks(name, phase string, peaks map[string]float64, vram, alloc, host, tol float64, allocEnforced bool) []results.Check {
	var out []results.Check
	_, hasReserved := peaks[SourceServerReserved]
	_, hasAlloc := peaks[SourceServerAllocated]
	_, hasNVML := peaks[SourceNVMLProcess]
	byAlloc := allocEnforced && !math.IsNaN(alloc)
	key, allocKey := phase+"_vram_mb", phase+"_allocated_mb"
	for _, src := range slices.Sorted(maps.Keys(peaks)) {
		if strings.Contains(src, ":") {
			continue
		}
		v := peaks[src]
		switch src {
		case SourceServerReserved:
			c := memCheck(name, src, v, vram, tol, vramPadMiB, key)
			if byAlloc {
				c = Unenforced([]results.Check{c}, "reported, not enforced: "+allocKey+" exists, so the allocated peak is the one enforced")[0]
			}
			out = append(out, c)
		case SourceNVMLProcess:
			if hasReserved || hasAlloc {
				out = append(out, recorded(name, src, v, "recorded; the limit applies to the server's own peak, which "+key+" measures"))
			} else {
				out = append(out, memCheck(name, src, v, vram, tol, vramPadMiB, key))
			}
		case SourceServerAllocated:
			if math.IsNaN(alloc) {
				continue
			}
			c := memCheck(name, src, v, alloc, tol, vramPadMiB, allocKey)
			if !allocEnforced {
				c = Unenforced([]results.Check{c}, "reported, not enforced: SGLang enforces the allocated peak at runtime only")[0]
			}
			out = append(out, c)
		case SourceHostAnon, SourceServerHostAnon:
			out = append(out, memCheck(name, src, v, host, tol, hostAnonPadMiB, phase+"_host_anon_mb"))
		default:
			out = append(out, recorded(name, src, v, "recorded for the report and for growth across requests; no baseline applies"))
		}
	}
	switch {
	case byAlloc && !hasAlloc:
		out = append(out, missingVRAM(name, SourceServerAllocated, alloc, tol, allocKey, "the server reported no peak_allocated_mb"))
	case !byAlloc && !hasReserved && !hasNVML && !math.IsNaN(vram):
		out = append(out, missingVRAM(name, "", vram, tol, key, "the server reported no memory_snapshots and NVML was unavailable"))
	}
	return out
}

// NoVRAMVerdict is why memory checks are recorded, not enforced, off CUDA: SGLang's harness
// validates peak VRAM only under current_platform.is_cuda() (test_server_common.py @
// a7ec6b97f786, _validate_and_record), so an AMD (ROCm) run gets no VRAM verdict.
const NoVRAMVerdict = "recorded, not enforced: SGLang makes no VRAM verdict off CUDA (AMD, ROCm)"

// MissingVRAMBaseline is SGLang's failure of a perf-checked scenario on CUDA whose baseline
// lacks load_peak_vram_mb or runtime_peak_vram_mb ("Testcase '<id>' is missing a load/runtime
// peak VRAM baseline in <file>", test_server_common.py @ a7ec6b97f786, _validate_and_record):
// one case-level failure per missing key, memory.load_peak or memory.runtime_peak, with what
// was measured; nil when both are there.
func MissingVRAMBaseline(file, scenario string, b MemoryBaseline, loadPeaks map[string]float64) []results.Check {
	var out []results.Check
	for _, m := range []struct {
		name, key string
		base      float64
		measured  map[string]float64
	}{{MemoryLoadPeak, "load_peak_vram_mb", b.LoadPeakMiB, loadPeaks}, {MemoryRuntimePeak, "runtime_peak_vram_mb", b.RuntimePeakMiB, nil}} {
		if !math.IsNaN(m.base) {
			continue
		}
		d := fmt.Sprintf("Testcase '%s' is missing a load/runtime peak VRAM baseline in %s: the scenario has no %s", scenario, file, m.key)
		if v, ok := m.measured[SourceServerReserved]; ok {
			d += fmt.Sprintf(" (measured %s MiB)", fmtNum(v))
		}
		out = append(out, results.Check{Name: m.name, Status: results.Fail, Unit: "MiB", Detail: d, Cause: "no " + m.key + " baseline"})
	}
	return out
}

// missingVRAM is the failure of an enforced VRAM baseline without a measurement.
func missingVRAM(name, src string, baseline, tol float64, key, why string) results.Check {
	c := memCheck(name, src, math.NaN(), baseline, tol, vramPadMiB, key)
	c.Detail = fmt.Sprintf("%s: peak VRAM metric missing (%s), baseline %s %s MiB", name, why, key, fmtNum(baseline))
	return c
}

func recorded(name, src string, v float64, why string) results.Check {
	return results.Check{Name: name, Status: results.Skip, Value: finite(v), Unit: "MiB", Source: src, Detail: src + " " + fmtNum(v) + " MiB " + why}
}

// memCheck is limitCheck for memory; a NaN baseline records the value as a skip. A zero or
// missing peak against a baseline fails as SGLang's "peak VRAM metric missing".
func memCheck(name, src string, v, baseline, tol, pad float64, key string) results.Check {
	if math.IsNaN(baseline) {
		return recorded(name, src, v, "recorded; the baseline has no "+key+" for this scenario")
	}
	c := limitCheck(name, "MiB", v, baseline, tol, pad, 0, src+" vs "+key)
	c.Source = src
	if c.Status == results.Fail && !(v > 0) && baseline > 0 {
		c.Detail = "peak VRAM metric missing: " + c.Detail
	}
	return c
}

// GrowthSince judges the growth from a request's previous request (named since, e.g.
// "request 2" or "confirmation request 1"; its runtime peaks prev) to the request (its peaks
// cur, its checks cs): for every source measured in both, a runtime peak above
// max(prev × (1 + tol), prev + pad) fails memory.runtime_peak of that source with "grew from
// X to Y MiB since <since>", even when the peak is still under the baseline. pad is
// hostAnonPadMiB for host memory and 0 for VRAM. It returns cs with the checks of the sources
// that grew turned into failures (a new check where cs had none for the source), leaving cs
// itself unchanged, and the checks that failed this way.
func GrowthSince(cs []results.Check, prev, cur map[string]float64, since string, tol float64) (out, grew []results.Check) {
	out = slices.Clone(cs)
	for _, src := range slices.Sorted(maps.Keys(cur)) {
		if strings.Contains(src, ":") {
			continue
		}
		was, ok := prev[src]
		now := cur[src]
		if !ok || was <= 0 || math.IsNaN(was) || math.IsNaN(now) {
			continue
		}
		pad := 0.0
		if src == SourceHostAnon || src == SourceServerHostAnon {
			pad = hostAnonPadMiB
		}
		limit := PerfLimit(was, tol, pad)
		if now <= limit {
			continue
		}
		detail := fmt.Sprintf("%s grew from %s to %s MiB since %s (+%s MiB, %s; growth limit %s MiB: tolerance %s, pad %s MiB)%s",
			src, fmtNum(was), fmtNum(now), since, fmtNum(now-was), fmtPct(now/was-1), fmtNum(limit), fmtPct(tol), fmtNum(pad), pendingWords)
		at := slices.IndexFunc(out, func(c results.Check) bool { return c.Name == MemoryRuntimePeak && c.Source == src })
		if at < 0 {
			out = append(out, results.Check{Name: MemoryRuntimePeak, Source: src, Unit: "MiB", Value: finite(now)})
			at = len(out) - 1
		}
		c := &out[at]
		if c.Status == results.Pass || c.Status == results.Skip || c.Status == "" {
			// Growth is the limit this value broke: the previous request's peak is its
			// baseline, so that Limit, Baseline, Tolerance and Pad say why it failed.
			c.Detail = detail
			c.Limit, c.Baseline, c.Tolerance, c.Pad = Float(limit), Float(was), Float(tol), Float(pad)
		} else {
			c.Detail = detail + "; " + c.Detail
		}
		c.Status = results.Fail
		c.Cause = fmt.Sprintf("memory rose +%s MiB since %s", fmtNum(now-was), since)
		grew = append(grew, *c)
	}
	return out, grew
}

// pendingWords end the detail of a growth failure (GrowthSince), and its cause says "rose",
// until the request after it tells growth from a one-off spike (SettleGrowth): what a live
// log line or the first requests.jsonl line of the request says.
const pendingWords = ": growth or a one-off spike, the next request tells"

// SettleGrowth words the growth failures of request rr by what the request after it shows
// (next; nil when no later request of the case was measured: rr is its case's last, or the
// ones after it were never sent): growth when next keeps the memory above rr's growth limit;
// a one-off spike in rr when next is back under it; a rise that no request can tell when
// next did not measure the source or there is no next. The verdicts stay: only the cause and
// the detail's end change. It returns rr reworded and the checks reworded, none when nothing
// changed (a request without a growth failure still worded as pending).
func SettleGrowth(rr results.RequestResult, next *results.RequestResult) (out results.RequestResult, reworded []results.Check) {
	out = rr
	out.Checks = slices.Clone(rr.Checks)
	for i := range out.Checks {
		c := &out.Checks[i]
		if c.Name != MemoryRuntimePeak || c.Status != results.Fail || !strings.Contains(c.Detail, pendingWords) ||
			c.Baseline == nil || c.Tolerance == nil || c.Pad == nil || c.Value == nil {
			continue
		}
		was, now := *c.Baseline, *c.Value
		this := rr.Name()
		after, told := 0.0, false // next's peak of the source, when it measured one
		if next != nil {
			after, told = next.PeakVRAMMiB[c.Source]
			told = told && !math.IsNaN(after)
		}
		var words string
		cause := fmt.Sprintf("memory rose +%s MiB in %s", fmtNum(now-was), this)
		switch {
		case next == nil && rr.Of > 0 && rr.Index < rr.Of:
			words = fmt.Sprintf(": a rise in %s, the last of the case measured, so no later request shows whether it stays", this)
		case next == nil:
			words = fmt.Sprintf(": a rise in %s, the case's last, so no later request shows whether it stays", this)
		case !told:
			words = fmt.Sprintf(": a rise in %s; %s did not measure %s, so no request shows whether it stays", this, next.Name(), c.Source)
		case after > PerfLimit(was, *c.Tolerance, *c.Pad):
			words = fmt.Sprintf(": memory grows across requests: %s keeps it (%s MiB)", next.Name(), fmtNum(after))
			cause = fmt.Sprintf("memory grows +%s MiB per request", fmtNum(now-was))
		default:
			words = fmt.Sprintf(": a one-off spike in %s, not growth: %s is back to %s MiB", this, next.Name(), fmtNum(after))
			cause = fmt.Sprintf("memory spike in %s: +%s MiB, gone by %s", this, fmtNum(now-was), next.Name())
		}
		c.Detail = strings.Replace(c.Detail, pendingWords, words, 1)
		c.Cause = cause
		reworded = append(reworded, *c)
	}
	return out, reworded
}
