package checks

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// Memory check names.
const (
	MemoryLoadPeak    = "memory.load_peak"
	MemoryRuntimePeak = "memory.runtime_peak"
)

// Memory sources: the labels of RequestResult.PeakVRAMMiB and Load.PeakVRAMMiB.
const (
	SourceServerReserved  = "server_reserved"
	SourceServerAllocated = "server_allocated"
	SourceServerHostAnon  = "server_host_anon"
	SourceNVMLProcess     = "nvml_process"
	SourceNVMLDevice      = "nvml_device"
	SourceHostAnon        = "host_anon"
)

// Memory tolerances of spec §4, used when a baseline file's profile has none; host
// anonymous memory gets a pad on top of the runtime tolerance.
const (
	DefaultLoadPeakTolerance    = 0.01
	DefaultRuntimePeakTolerance = 0.02
	HostAnonPadMiB              = 256.0
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
	LoadTol             float64
	RuntimeTol          float64
}

// NoMemoryBaseline is a MemoryBaseline without values and with the default tolerances: what
// applies to a case whose suite has no baselines, so that growth is still watched.
func NoMemoryBaseline() MemoryBaseline {
	nan := math.NaN()
	return MemoryBaseline{nan, nan, nan, nan, nan, nan, DefaultLoadPeakTolerance, DefaultRuntimePeakTolerance}
}

// LoadMemory checks the peaks of one server start (Load.PeakVRAMMiB) against the load
// baselines; see memoryChecks for the rules.
func LoadMemory(peaks map[string]float64, b MemoryBaseline) []Check {
	return memoryChecks(MemoryLoadPeak, "load_peak", peaks, b.LoadPeakMiB, b.LoadAllocatedMiB, b.LoadHostAnonMiB, b.LoadTol)
}

// RuntimeMemory checks one request's peaks against the runtime baselines; see memoryChecks.
func RuntimeMemory(peaks map[string]float64, b MemoryBaseline) []Check {
	return memoryChecks(MemoryRuntimePeak, "runtime_peak", peaks, b.RuntimePeakMiB, b.RuntimeAllocatedMiB, b.RuntimeHostAnonMiB, b.RuntimeTol)
}

// memoryChecks makes one check per source present, each labelled with its Source:
//   - server_reserved against <phase>_vram_mb (what SGLang's baseline means: the reserved peak
//     of the server's memory_snapshots);
//   - server_allocated against <phase>_allocated_mb, only when that baseline exists;
//   - nvml_process against <phase>_vram_mb only when the server reported no reserved peak
//     (an older server: NVML is then the only VRAM number); otherwise recorded as a skip,
//     since NVML also counts the CUDA context and would never fit a reserved-memory baseline;
//   - nvml_device recorded as a skip (it counts every process on the GPU);
//   - host_anon and server_host_anon against <phase>_host_anon_mb with a 256 MiB pad.
//
// A VRAM baseline with no VRAM measurement at all fails; no baseline means "recorded, not
// checked" (skip with the value). Per-GPU sources ("nvml_process:1") are left to the totals.
func memoryChecks(name, phase string, peaks map[string]float64, vram, alloc, host, tol float64) []Check {
	var out []Check
	_, hasReserved := peaks[SourceServerReserved]
	_, hasNVML := peaks[SourceNVMLProcess]
	key := phase + "_vram_mb"
	for _, src := range slices.Sorted(maps.Keys(peaks)) {
		if strings.Contains(src, ":") {
			continue
		}
		v := peaks[src]
		switch src {
		case SourceServerReserved:
			out = append(out, memCheck(name, src, v, vram, tol, 0, key))
		case SourceNVMLProcess:
			if hasReserved {
				out = append(out, recorded(name, src, v, "recorded; the limit applies to server_reserved, which "+key+" measures"))
			} else {
				out = append(out, memCheck(name, src, v, vram, tol, 0, key))
			}
		case SourceServerAllocated:
			if !math.IsNaN(alloc) {
				out = append(out, memCheck(name, src, v, alloc, tol, 0, phase+"_allocated_mb"))
			}
		case SourceHostAnon, SourceServerHostAnon:
			out = append(out, memCheck(name, src, v, host, tol, HostAnonPadMiB, phase+"_host_anon_mb"))
		default:
			out = append(out, recorded(name, src, v, "recorded for the report and for growth across requests; no baseline applies"))
		}
	}
	if !hasReserved && !hasNVML && !math.IsNaN(vram) {
		c := memCheck(name, "", math.NaN(), vram, tol, 0, key)
		c.Detail = fmt.Sprintf("%s: no VRAM measurement (the server reported no memory_snapshots and NVML was unavailable), baseline %s MiB", name, fmtNum(vram))
		out = append(out, c)
	}
	return out
}

func recorded(name, src string, v float64, why string) Check {
	return Check{Name: name, Status: Skip, Value: finite(v), Unit: "MiB", Source: src, Detail: src + " " + fmtNum(v) + " MiB " + why}
}

// memCheck is limitCheck for memory; a NaN baseline records the value as a skip.
func memCheck(name, src string, v, baseline, tol, pad float64, key string) Check {
	if math.IsNaN(baseline) {
		return recorded(name, src, v, "recorded; the baseline has no "+key+" for this scenario")
	}
	c := limitCheck(name, "MiB", v, baseline, tol, pad, 0, src+" vs "+key)
	c.Source = src
	return c
}

// Growth flags memory that grows from request to request, the signal of a leak: for every
// request i ≥ 2 and every source measured in both i−1 and i, a runtime peak above
// max(prev × (1 + tol), prev + pad) fails memory.runtime_peak of request i with "grew from X
// to Y MiB since request i−1", even when the peak is still under the baseline. pad is
// HostAnonPadMiB for host memory and 0 for VRAM. The existing check of that source is
// turned into the failure; a new check is added when there is none. Requests are matched
// by Index. It returns how many checks failed this way.
func Growth(reqs []RequestResult, tol float64) int {
	byIndex := map[int]*RequestResult{}
	for i := range reqs {
		byIndex[reqs[i].Index] = &reqs[i]
	}
	n := 0
	for i := range reqs {
		cur := &reqs[i]
		prev := byIndex[cur.Index-1]
		if prev == nil {
			continue
		}
		for _, src := range slices.Sorted(maps.Keys(cur.PeakVRAMMiB)) {
			if strings.Contains(src, ":") {
				continue
			}
			was, ok := prev.PeakVRAMMiB[src]
			now := cur.PeakVRAMMiB[src]
			if !ok || was <= 0 || math.IsNaN(was) || math.IsNaN(now) {
				continue
			}
			pad := 0.0
			if src == SourceHostAnon || src == SourceServerHostAnon {
				pad = HostAnonPadMiB
			}
			limit := PerfLimit(was, tol, pad)
			if now <= limit {
				continue
			}
			detail := fmt.Sprintf("%s grew from %s to %s MiB since request %d (+%s MiB, %s; growth limit %s MiB: tolerance %s, pad %s MiB): memory grows across requests",
				src, fmtNum(was), fmtNum(now), prev.Index, fmtNum(now-was), fmtPct(now/was-1), fmtNum(limit), fmtPct(tol), fmtNum(pad))
			at := slices.IndexFunc(cur.Checks, func(c Check) bool { return c.Name == MemoryRuntimePeak && c.Source == src })
			if at < 0 {
				cur.Checks = append(cur.Checks, Check{Name: MemoryRuntimePeak, Source: src, Unit: "MiB", Value: finite(now)})
				at = len(cur.Checks) - 1
			}
			c := &cur.Checks[at]
			if c.Status == Pass || c.Status == Skip || c.Status == "" {
				// Growth is the limit this value broke: the previous request's peak is its
				// baseline, so that Limit, Baseline, Tolerance and Pad say why it failed.
				c.Detail = detail
				c.Limit, c.Baseline, c.Tolerance, c.Pad = Float(limit), Float(was), Float(tol), Float(pad)
			} else {
				c.Detail = detail + "; " + c.Detail
			}
			c.Status = Fail
			c.Cause = fmt.Sprintf("memory grows +%s MiB per request", fmtNum(now-was))
			n++
		}
	}
	return n
}
