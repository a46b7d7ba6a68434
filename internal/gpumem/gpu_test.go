//go:build gpu

package gpumem

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// These tests need an NVIDIA GPU, its driver and python3 with PyTorch:
//
//	go test -tags gpu -run GPU -v ./internal/gpumem -args -report gpu-report.json
var (
	reportPath = flag.String("report", "", "write the measured figures of the GPU tests to this JSON file")
	idleFor    = flag.Duration("idle", 20*time.Second, "how long the CPU cost of sampling is measured")
	python     = flag.String("python", "python3", "python with PyTorch")
)

// gpuReport is what the GPU validation measured; docs/gpu.md quotes it.
type gpuReport struct {
	Date, GPU, Driver string
	IntervalMs        float64
	CallUs            map[string]float64 // cost of one NVML call, mean over many
	CtxMiB            float64            // NVML per-process after CUDA init, nothing allocated
	CtxDeviceMiB      float64
	TorchCtxReserved  string
	SteadyMiB         float64 // NVML per-process with the steady tensor held
	SteadyDeviceMiB   float64
	SteadyAllocMiB    float64
	SpikeAllocMiB     float64
	Spikes            []spikeResult
	Detected          int
	GapFalsePositive  int
	Idle              idleResult            // the default options
	IdleVariants      map[string]idleResult // other timers, intervals and rescan rates
	TorchLast         string
}

type spikeResult struct {
	PeakProcMiB, PeakDevMiB, ExcessMiB, ErrorMiB float64
	Samples                                      int
	Script                                       string
}

type idleResult struct {
	Seconds, CPUPercentOfOneCore, SamplesPerSecond float64
	Ticks, Missed, Rescans, TreeSize               int
	MallocsPerSample, BytesPerSample               float64
	// SampleUs is the mean wall time of one tick's sample; RescanPercent the share of one
	// core spent re-reading the process tree.
	SampleUs, RescanPercent float64
}

func TestGPUCallCost(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	if s.Unavailable() != "" {
		t.Fatal(s.Unavailable())
	}
	d := s.devices[0]
	const n = 5000
	cost := map[string]float64{}
	t0 := time.Now()
	for range n {
		if _, ret := d.GetMemoryInfo(); ret != nvml.SUCCESS {
			t.Fatal(ret)
		}
	}
	cost["GetMemoryInfo"] = float64(time.Since(t0).Microseconds()) / n
	t0 = time.Now()
	for range n {
		if _, ret := d.GetComputeRunningProcesses(); ret != nvml.SUCCESS {
			t.Fatal(ret)
		}
	}
	cost["GetComputeRunningProcesses"] = float64(time.Since(t0).Microseconds()) / n
	allocs := testing.AllocsPerRun(1000, func() { d.GetComputeRunningProcesses() })
	cost["GetComputeRunningProcesses_allocs"] = allocs
	t.Logf("NVML call cost (µs): %v", cost)
	mergeReport(t, func(r *gpuReport) { r.CallUs = cost })
}

// TestGPUSpikes runs testdata/workload.py under the sampler: a steady 4 GiB, then a 20 GiB
// tensor held about 2 ms, 20 times; every spike must be seen, no gap may look like one.
func TestGPUSpikes(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	if s.Unavailable() != "" {
		t.Fatal(s.Unavailable())
	}
	cmd := exec.CommandContext(t.Context(), *python, "testdata/workload.py")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	sess, err := s.start(t.Context(), cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Stop()

	rep := gpuReport{Date: time.Now().UTC().Format(time.RFC3339), IntervalMs: float64(s.opts.Interval) / 1e6}
	if name, ret := s.devices[0].GetName(); ret == nvml.SUCCESS {
		rep.GPU = name
	}
	if v, ret := s.lib.SystemGetDriverVersion(); ret == nvml.SUCCESS {
		rep.Driver = v
	}
	sc := bufio.NewScanner(outPipe)
	reply := func() { io.WriteString(in, "go\n") }
	snapshot := func() (proc, dev float64) {
		p := sess.Window().End()
		return p.MiB[LabelProcess], p.MiB[LabelDevice]
	}
	var open *window
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		switch f[0] {
		case "ctx":
			rep.CtxMiB, rep.CtxDeviceMiB = snapshot()
			rep.TorchCtxReserved = line
		case "steady":
			rep.SteadyMiB, rep.SteadyDeviceMiB = snapshot()
			fmt.Sscanf(kv(f, "alloc_mib"), "%g", &rep.SteadyAllocMiB)
			rep.SpikeAllocMiB = 20480
		case "spike":
			open = sess.Window().(*window)
		case "spiked":
			p := open.End()
			sr := spikeResult{PeakProcMiB: p.MiB[LabelProcess], PeakDevMiB: p.MiB[LabelDevice], Samples: p.Samples, Script: line}
			sr.ExcessMiB = sr.PeakProcMiB - rep.SteadyMiB
			sr.ErrorMiB = sr.ExcessMiB - rep.SpikeAllocMiB
			if sr.ExcessMiB >= 0.9*rep.SpikeAllocMiB {
				rep.Detected++
			}
			rep.Spikes = append(rep.Spikes, sr)
			open = sess.Window().(*window) // the gap after it
		case "gap":
			p := open.End()
			if p.MiB[LabelProcess]-rep.SteadyMiB > 0.1*rep.SpikeAllocMiB {
				rep.GapFalsePositive++
			}
		case "idle":
			rep.TorchLast = line
			rep.Idle = measureIdle(t, sess, *idleFor)
			sess.Stop()
			rep.IdleVariants = map[string]idleResult{}
			for name, o := range map[string]Options{
				"runtime-timer-1ms":           {Timer: TimerRuntime},
				"thread-timer-2ms":            {Interval: 2 * time.Millisecond},
				"thread-timer-5ms":            {Interval: 5 * time.Millisecond},
				"thread-timer-1ms-rescan-5hz": {RescanInterval: 200 * time.Millisecond},
				"device-query-only-1ms":       {skipProcess: true},
				"process-query-only-1ms":      {skipDevice: true},
			} {
				o.Library = s.lib
				v := New(o)
				vs, err := v.start(t.Context(), cmd.Process.Pid)
				if err != nil {
					t.Fatal(err)
				}
				rep.IdleVariants[name] = measureIdle(t, vs, *idleFor/2)
				vs.Stop()
			}
		case "done":
			goto done
		}
		reply()
	}
done:
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("GPU %s driver %s; context %.0f MiB (device %.0f), steady %.0f MiB for %.0f MiB allocated",
		rep.GPU, rep.Driver, rep.CtxMiB, rep.CtxDeviceMiB, rep.SteadyMiB, rep.SteadyAllocMiB)
	for i, sp := range rep.Spikes {
		t.Logf("spike %2d: peak %.0f MiB, excess over steady %.0f MiB (error %+.0f), %d samples; %s", i, sp.PeakProcMiB, sp.ExcessMiB, sp.ErrorMiB, sp.Samples, sp.Script)
	}
	t.Logf("detected %d/%d spikes, %d gaps looked like a spike", rep.Detected, len(rep.Spikes), rep.GapFalsePositive)
	t.Logf("idle: %+v", rep.Idle)
	for name, v := range rep.IdleVariants {
		t.Logf("idle %s: %+v", name, v)
	}
	mergeReport(t, func(r *gpuReport) {
		callUs := r.CallUs
		*r = rep
		r.CallUs = callUs
	})
	if len(rep.Spikes) != 20 || rep.Detected != len(rep.Spikes) {
		t.Errorf("detected %d of %d spikes, want all 20", rep.Detected, len(rep.Spikes))
	}
	if rep.GapFalsePositive != 0 {
		t.Errorf("%d gaps looked like a spike", rep.GapFalsePositive)
	}
	if rep.Idle.CPUPercentOfOneCore >= 2 {
		t.Errorf("sampling costs %.2f%% of one core, want < 2%%", rep.Idle.CPUPercentOfOneCore)
	}
}

// measureIdle measures the whole test process's CPU time (the sampler is all that runs) over
// d, with getrusage.
func measureIdle(t *testing.T, sess *Session, d time.Duration) idleResult {
	var ru0, ru1 syscall.Rusage
	var ms0, ms1 runtime.MemStats
	st0 := sess.Stats()
	runtime.ReadMemStats(&ms0)
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	t0 := time.Now()
	time.Sleep(d)
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	wall := time.Since(t0)
	runtime.ReadMemStats(&ms1)
	st1 := sess.Stats()
	cpu := tv(ru1.Utime) + tv(ru1.Stime) - tv(ru0.Utime) - tv(ru0.Stime)
	samples := float64(st1.Samples - st0.Samples)
	ticks := st1.Ticks - st0.Ticks
	return idleResult{
		Rescans:             st1.Rescans - st0.Rescans,
		TreeSize:            st1.TreeSize,
		SampleUs:            float64((st1.SampleTime - st0.SampleTime).Microseconds()) / float64(max(ticks, 1)),
		RescanPercent:       100 * (st1.RescanTime - st0.RescanTime).Seconds() / wall.Seconds(),
		Seconds:             wall.Seconds(),
		CPUPercentOfOneCore: 100 * cpu.Seconds() / wall.Seconds(),
		SamplesPerSecond:    samples / wall.Seconds(),
		Ticks:               ticks,
		Missed:              st1.Missed - st0.Missed,
		MallocsPerSample:    float64(ms1.Mallocs-ms0.Mallocs) / samples,
		BytesPerSample:      float64(ms1.TotalAlloc-ms0.TotalAlloc) / samples,
	}
}

func tv(v syscall.Timeval) time.Duration {
	return time.Duration(v.Sec)*time.Second + time.Duration(v.Usec)*time.Microsecond
}

func kv(f []string, key string) string {
	for _, s := range f {
		if k, v, ok := strings.Cut(s, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// mergeReport updates the JSON report file, which several tests of one run fill.
func mergeReport(t *testing.T, update func(*gpuReport)) {
	if *reportPath == "" {
		return
	}
	var r gpuReport
	if b, err := os.ReadFile(*reportPath); err == nil {
		json.Unmarshal(b, &r)
	}
	update(&r)
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(*reportPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
