package gpumem

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/gpumem/nvml"
	"github.com/diffusion-check/diffusion-check/internal/hostmem"
	"github.com/diffusion-check/diffusion-check/internal/memory"
	"github.com/diffusion-check/diffusion-check/results"
)

// Options configures a Sampler. The zero value samples every millisecond.
type Options struct {
	// Interval between GPU samples; default 1ms. Ticks follow an absolute schedule, so a slow
	// sample never shifts the later ones; ticks missed meanwhile are dropped.
	Interval time.Duration
	// Visible is the runner's CUDA_VISIBLE_DEVICES (cmd reads it): the GPUs the servers it
	// starts can use, as CUDA indices ("2,3") or UUIDs ("GPU-5f0c…", a prefix is enough). Only
	// those are sampled, so that on a host shared by several runners nvml_device and the growth
	// checks count this runner's GPUs, not the other runners' jobs (NVML itself ignores the
	// variable). Empty samples every GPU. Indices are NVML's, which are CUDA's with
	// CUDA_DEVICE_ORDER=PCI_BUS_ID (docs/github-actions.md); parsing stops at the first entry
	// that names no GPU, as CUDA's does; a MIG instance ("MIG-…") samples every GPU.
	Visible string

	// What the tests set (the package's defaults otherwise): hostInterval between
	// host-memory samples (RssAnon moves slowly and costs a read per process), default 10ms;
	// rescanInterval between re-reads of the process tree (servers spawn workers), default 1s
	// (a rescan reads /proc/*/stat of every process on the host: about 2 ms for a hundred
	// processes, docs/gpu.md); processInterval, the longest time between two per-process
	// queries (nvmlDeviceGetComputeRunningProcesses) while a window is open, default 50ms:
	// every tick reads only the device's used memory, which is cheaper, and the per-process
	// list is queried when that counter rises above its value at the last per-process query (a
	// new per-process peak is possible only then, while the other processes on the GPU hold
	// still), when the process tree changed, at every window open and end, and at least once
	// per processInterval (docs/gpu.md says what this can miss); procDir, the /proc mount to
	// read, default "/proc"; library, the NVML library, nil for the driver's (nvml.Open), a
	// mock in tests; timer, how the sampler waits for its next tick, default timerThread where
	// the platform has it.
	hostInterval, rescanInterval, processInterval time.Duration
	procDir                                       string
	library                                       nvml.Interface
	timer                                         timerKind

	// Variants measured by the GPU validation (gpu_test.go), never set otherwise:
	// procEveryTick queries the per-process list on every tick (the first design); memV2
	// reads the device counter with nvmlDeviceGetMemoryInfo_v2; ticksOnly wakes on schedule
	// and samples nothing (the cost of the wake-ups alone); maxDevices samples only the
	// first GPUs.
	procEveryTick, memV2, ticksOnly bool
	maxDevices                      int
}

// timerKind is how the sampling loop waits between ticks. Both keep an absolute schedule
// (tick k at start + k·Interval) and drop ticks that a slow sample overran.
type timerKind int

const (
	// timerDefault is timerThread on Linux and timerRuntime elsewhere.
	timerDefault timerKind = iota
	// timerRuntime waits on Go runtime timers: what testing/synctest can fake, but every
	// tick wakes the scheduler, which costs several times the NVML calls (docs/gpu.md).
	timerRuntime
	// timerThread locks the sampling goroutine to its own OS thread, which sleeps in
	// clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) until each tick (Linux).
	timerThread
)

func (o *Options) defaults() {
	if o.Interval <= 0 {
		o.Interval = time.Millisecond
	}
	if o.hostInterval <= 0 {
		o.hostInterval = 10 * time.Millisecond
	}
	if o.rescanInterval <= 0 {
		o.rescanInterval = time.Second
	}
	if o.processInterval <= 0 {
		o.processInterval = 50 * time.Millisecond
	}
	if o.procDir == "" {
		o.procDir = "/proc"
	}
	if o.timer == timerDefault {
		o.timer = defaultTimer
	}
}

// Sampler measures process trees; each Start is one session. Create it with New and release
// NVML with Close.
type Sampler struct {
	opts        Options
	lib         nvml.Interface
	devices     []nvml.Device
	unavailable string // why NVML is not used; empty when it is
}

// New initialises NVML and finds the GPUs. It never fails: without a driver or a GPU the
// sampler still samples host memory and Unavailable says why NVML is not used.
func New(opts Options) *Sampler {
	opts.defaults()
	s := &Sampler{opts: opts, lib: opts.library}
	if s.lib == nil {
		lib, err := nvml.Open()
		if err != nil {
			s.unavailable = "nvml unavailable: " + err.Error()
			return s
		}
		s.lib = lib
	}
	if err := s.init(); err != nil {
		s.unavailable = "nvml unavailable: " + err.Error()
		s.devices = nil
	}
	return s
}

func (s *Sampler) init() (err error) {
	// go-nvml panics on some broken installs (a library without the symbols it binds).
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("init panicked: %v", p)
		}
	}()
	if ret := s.lib.Init(); ret != nvml.SUCCESS {
		s.lib = nil
		return fmt.Errorf("init: %w", ret)
	}
	n, ret := s.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return fmt.Errorf("device count: %w", ret)
	}
	if n == 0 {
		return errors.New("no GPU")
	}
	if o := s.opts.maxDevices; o > 0 && n > o {
		n = o
	}
	var all []nvml.Device
	for i := range n {
		d, ret := s.lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			return fmt.Errorf("GPU %d: handle: %w", i, ret)
		}
		all = append(all, d)
	}
	s.devices = visible(all, s.opts.Visible)
	if len(s.devices) == 0 {
		return fmt.Errorf("CUDA_VISIBLE_DEVICES=%s names none of the %d GPUs", s.opts.Visible, n)
	}
	return nil
}

// visible returns the devices of all (in NVML's order) that spec, a CUDA_VISIBLE_DEVICES
// value, names, in spec's order; every device when spec is empty or names a MIG instance.
func visible(all []nvml.Device, spec string) []nvml.Device {
	if strings.TrimSpace(spec) == "" || strings.Contains(spec, "MIG-") {
		return all
	}
	var out []nvml.Device
	for entry := range strings.SplitSeq(spec, ",") {
		entry = strings.TrimSpace(entry)
		d := deviceOf(all, entry)
		if d == nil || slices.Contains(out, d) {
			break // CUDA ignores the entry and every one after it
		}
		out = append(out, d)
	}
	return out
}

// deviceOf returns the device an entry of CUDA_VISIBLE_DEVICES names: an index, or a UUID (or
// its prefix, "GPU-" and all); nil when it names none.
func deviceOf(all []nvml.Device, entry string) nvml.Device {
	if i, err := strconv.Atoi(entry); err == nil {
		if i >= 0 && i < len(all) {
			return all[i]
		}
		return nil
	}
	if !strings.HasPrefix(entry, "GPU-") {
		return nil
	}
	var found nvml.Device
	for _, d := range all {
		if uuid, ret := d.GetUUID(); ret == nvml.SUCCESS && strings.HasPrefix(uuid, entry) {
			if found != nil {
				return nil // an ambiguous prefix names no GPU
			}
			found = d
		}
	}
	return found
}

// Unavailable says why GPU memory is not sampled, or "" when it is.
func (s *Sampler) Unavailable() string { return s.unavailable }

// Devices is the number of GPUs sampled.
func (s *Sampler) Devices() int { return len(s.devices) }

// Capability returns the CUDA compute capability of GPU 0 (9, 0 for an H100 or H200; 10, 0
// for a B200), for choosing SGLang's platform files; 0, 0 when there is no GPU or NVML
// cannot tell.
func (s *Sampler) Capability() (major, minor int) {
	defer func() {
		if recover() != nil { // see init: go-nvml may panic on a broken install
			major, minor = 0, 0
		}
	}()
	if len(s.devices) == 0 {
		return 0, 0
	}
	major, minor, ret := s.devices[0].GetCudaComputeCapability()
	if ret != nvml.SUCCESS {
		return 0, 0
	}
	return major, minor
}

// DeviceNames returns the product name of every sampled GPU ("NVIDIA H200", ...), for choosing
// the GPU class of the baselines; a name NVML cannot give is "".
func (s *Sampler) DeviceNames() (names []string) {
	defer func() {
		if recover() != nil { // see init: go-nvml may panic on a broken install
			names = make([]string, len(s.devices))
		}
	}()
	for _, d := range s.devices {
		n, ret := d.GetName()
		if ret != nvml.SUCCESS {
			n = ""
		}
		names = append(names, n)
	}
	return names
}

// Close shuts NVML down; sessions must be stopped first.
func (s *Sampler) Close() error {
	if s.lib == nil {
		return nil
	}
	lib := s.lib
	s.lib, s.devices = nil, nil
	if ret := lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("nvml shutdown: %w", ret)
	}
	return nil
}

// Start samples the process tree rooted at pid until the session is stopped. It takes a
// first sample before returning.
func (s *Sampler) Start(ctx context.Context, pid int) (memory.Session, error) {
	return s.start(ctx, pid)
}

func (s *Sampler) start(ctx context.Context, pid int) (*Session, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("sample memory: bad pid %d", pid)
	}
	nd := len(s.devices)
	x := &Session{
		s: s, pid: pid,
		tree:       hostmem.NewTree(s.opts.procDir),
		inTree:     map[uint32]bool{},
		devUsed:    make([]uint64, nd),
		devAtQuery: make([]uint64, nd),
		procUsed:   make([]uint64, nd),
		procHas:    make([]bool, nd),
		queryDev:   make([]bool, nd),
		memV2:      s.opts.memV2,
		stopCh:     make(chan struct{}),
		timeline:   memory.Timeline{Start: time.Now(), Interval: s.opts.Interval},
	}
	if s.unavailable != "" {
		x.notes = append(x.notes, s.unavailable)
	}
	if err := x.rescan(); err != nil {
		x.hostOff = true
		x.note(checks.SourceHostAnon + " unavailable: " + err.Error())
	}
	x.mu.Lock()
	x.sampleLocked(time.Now(), true)
	x.mu.Unlock()
	x.wg.Add(2)
	go x.loop(ctx)
	go x.rescanLoop(ctx)
	return x, nil
}

// Session samples one process tree. Its methods are safe for concurrent use.
type Session struct {
	s   *Sampler
	pid int

	wg       sync.WaitGroup
	stopCh   chan struct{}
	stopOnce sync.Once

	mu      sync.Mutex
	stopped bool
	windows []*window
	tree    *hostmem.Tree
	inTree  map[uint32]bool
	treeLen int
	// Per GPU: the device's used memory at the latest sample and at the latest per-process
	// query, and what that query found for the tree (procHas: a process of the tree was in
	// the list). queryDev is scratch of one sample.
	devUsed, devAtQuery []uint64
	procUsed            []uint64
	procHas, queryDev   []bool
	procStale           bool      // the tree changed or a query failed: query every GPU next
	procNext            time.Time // the periodic per-process query is due
	memV2               bool
	hostNext            time.Time
	hostOff             bool
	procOff             bool // per-process queries disabled (no permission, not supported)
	notes               []string
	failed              map[string]bool // NVML errors already noted, by call and code
	// timeline keeps every sample, bounded (memory.Timeline); host is the last host read.
	timeline memory.Timeline
	host     uint64
	hostSeen bool
	// Counters over the whole session, for validation.
	samples, ticks, idleTicks, missed, rescans int
	procQueries, riseQueries                   int
	sampleTime, rescanTime, threadCPU          time.Duration
}

// Stats counts a session's samples: Ticks is how many ticks the sampler handled, IdleTicks
// those with no window open (nothing sampled), Missed how many scheduled ticks it dropped
// because a sample overran, Samples all samples including those taken when a window opens or
// ends. ProcQueries counts per-process queries (one per GPU queried), RiseQueries those that
// a rise of the device counter triggered.
type Stats struct {
	Samples, Ticks, IdleTicks, Missed, TreeSize, Rescans int
	ProcQueries, RiseQueries                             int
	// SampleTime and RescanTime are the wall time spent taking tick samples and re-reading
	// the process tree; ThreadCPU the CPU time of the sampling thread (Linux, timerThread;
	// updated every 256 ticks and when the session stops).
	SampleTime, RescanTime, ThreadCPU time.Duration
}

// Stats returns the session's counters so far.
func (x *Session) Stats() Stats {
	x.mu.Lock()
	defer x.mu.Unlock()
	return Stats{Samples: x.samples, Ticks: x.ticks, IdleTicks: x.idleTicks, Missed: x.missed,
		TreeSize: x.treeLen, Rescans: x.rescans, ProcQueries: x.procQueries,
		RiseQueries: x.riseQueries, SampleTime: x.sampleTime, RescanTime: x.rescanTime,
		ThreadCPU: x.threadCPU}
}

func (x *Session) note(n string) {
	if !slices.Contains(x.notes, n) {
		x.notes = append(x.notes, n)
	}
}

// Stop ends sampling; windows still open keep what they saw.
func (x *Session) Stop() {
	x.stopOnce.Do(func() {
		close(x.stopCh)
		x.wg.Wait()
		x.mu.Lock()
		x.stopped = true
		x.tree.Close()
		x.mu.Unlock()
	})
}

func (x *Session) loop(ctx context.Context) {
	defer x.wg.Done()
	var sl sleeper = runtimeSleeper{epoch: time.Now()}
	locked := x.s.opts.timer == timerThread
	var cpu0 time.Duration
	if locked {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		sl = newThreadSleeper()
		cpu0 = threadCPU()
		defer func() {
			c := threadCPU() - cpu0
			x.mu.Lock()
			x.threadCPU = c
			x.mu.Unlock()
		}()
	}
	iv := int64(x.s.opts.Interval)
	ticksOnly := x.s.opts.ticksOnly
	start := sl.now()
	for k := int64(1); ; {
		sl.sleepUntil(start + k*iv)
		select {
		case <-x.stopCh:
			return
		case <-ctx.Done():
			return
		default:
		}
		t0 := time.Now()
		x.mu.Lock()
		x.ticks++
		switch {
		case ticksOnly:
		case len(x.windows) == 0:
			// Nothing to fold a sample into; a window's open takes a full sample.
			x.idleTicks++
		default:
			x.sampleLocked(t0, false)
		}
		x.sampleTime += time.Since(t0)
		if locked && x.ticks%256 == 0 {
			x.threadCPU = threadCPU() - cpu0
		}
		x.mu.Unlock()
		// A sample that overran the interval moves the schedule on to the next tick still
		// ahead, so ticks never bunch up; the skipped ones are counted.
		k++
		if now := sl.now(); now >= start+k*iv {
			skip := (now-start-k*iv)/iv + 1
			k += skip
			x.mu.Lock()
			x.missed += int(skip)
			x.mu.Unlock()
		}
	}
}

func (x *Session) rescanLoop(ctx context.Context) {
	defer x.wg.Done()
	t := time.NewTicker(x.s.opts.rescanInterval)
	defer t.Stop()
	for {
		select {
		case <-x.stopCh:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			if err := x.rescan(); err != nil {
				x.mu.Lock()
				x.note("process tree: " + err.Error())
				x.mu.Unlock()
			}
		}
	}
}

// rescan re-reads the process tree; the new set replaces the old one between two samples,
// and a changed set makes the next sample query every GPU's process list.
func (x *Session) rescan() error {
	t0 := time.Now()
	pids, err := hostmem.Descendants(x.s.opts.procDir, x.pid)
	if err != nil {
		return err
	}
	set := make(map[uint32]bool, len(pids))
	for _, p := range pids {
		set[uint32(p)] = true
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.stopped {
		return nil
	}
	x.rescans++
	x.rescanTime += time.Since(t0)
	if !maps.Equal(set, x.inTree) {
		x.procStale = true
	}
	x.inTree = set
	x.treeLen = len(pids)
	x.tree.Set(pids)
	return nil
}

// deviceUsed reads GPU i's used memory: nvmlDeviceGetMemoryInfo's used, or total − free from
// the _v2 call (the same number: it counts the driver's reservation too).
func (x *Session) deviceUsed(i int, d nvml.Device) (uint64, bool) {
	if x.memV2 {
		m, ret := d.GetMemoryInfo_v2()
		switch ret {
		case nvml.SUCCESS:
			return m.Total - m.Free, true
		case nvml.ERROR_FUNCTION_NOT_FOUND, nvml.ERROR_NOT_SUPPORTED:
			x.memV2 = false // an older driver: fall back to the first version
		default:
			x.fail("memory info", i, ret)
			return 0, false
		}
	}
	m, ret := d.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		x.fail("memory info", i, ret)
		return 0, false
	}
	return m.Used, true
}

// sampleLocked takes one sample and folds it into every open window. It allocates nothing
// itself; go-nvml's GetComputeRunningProcesses allocates its result slice (docs/gpu.md).
//
// full is set when a window opens or ends: every GPU's process list is queried and host
// memory read, so that every window holds a complete sample. Otherwise the device counters
// are read, and a GPU's process list only when its counter rose above its value at that
// GPU's last per-process query (then also every GPU whose counter moved, so that the sum
// over GPUs stays current), when the tree changed, or when processInterval has passed. Host
// memory is read every hostInterval.
func (x *Session) sampleLocked(now time.Time, full bool) {
	if x.stopped {
		return
	}
	x.samples++
	var devSum uint64
	devOK := len(x.s.devices) > 0
	all := full || x.procStale || x.s.opts.procEveryTick || !now.Before(x.procNext)
	rise := false
	for i, d := range x.s.devices {
		u, ok := x.deviceUsed(i, d)
		if !ok {
			// Without the counter no rise can be seen: query the processes instead.
			devOK = false
			x.queryDev[i], rise = true, true
			continue
		}
		x.devUsed[i] = u
		devSum += u
		x.queryDev[i] = u > x.devAtQuery[i]
		rise = rise || x.queryDev[i]
	}
	queried := false
	if !x.procOff && (all || rise) {
		if all {
			x.procNext = now.Add(x.s.opts.processInterval)
			x.procStale = false
		}
		for i, d := range x.s.devices {
			if !all && !x.queryDev[i] && x.devUsed[i] == x.devAtQuery[i] {
				continue
			}
			if !all && x.queryDev[i] {
				x.riseQueries++
			}
			x.queryProcesses(i, d)
			queried = true
			if x.procOff {
				break
			}
		}
	}
	var procSum uint64
	procSeen := false
	if queried && !x.procOff {
		for i, v := range x.procUsed {
			procSum += v
			procSeen = procSeen || x.procHas[i]
		}
	}
	var host uint64
	hostOK := false
	if !x.hostOff && (full || !now.Before(x.hostNext)) {
		x.hostNext = now.Add(x.s.opts.hostInterval)
		var read int
		host, read = x.tree.RssAnon()
		hostOK = read > 0
		x.host, x.hostSeen = host, hostOK
	}
	x.addToWindows(tick{devOK: devOK, devSum: devSum, procSeen: procSeen, procSum: procSum, hostOK: hostOK, host: host})
	x.addToTimeline(now, devOK, devSum)
}

// addToTimeline records the sample, with the per-process and host values as last read (they
// are read less often than the device counter, and hold in between).
func (x *Session) addToTimeline(now time.Time, devOK bool, devSum uint64) {
	var p memory.TimelinePoint
	if devOK {
		p.MiB[memory.TimelineDevice], p.Has[memory.TimelineDevice] = float32(mib(devSum)), true
	}
	if !x.procOff {
		var sum uint64
		for i, v := range x.procUsed {
			if x.procHas[i] {
				sum += v
				p.Has[memory.TimelineProcess] = true
			}
		}
		p.MiB[memory.TimelineProcess] = float32(mib(sum))
	}
	if x.hostSeen {
		p.MiB[memory.TimelineHost], p.Has[memory.TimelineHost] = float32(mib(x.host)), true
	}
	x.timeline.Add(now.Sub(x.timeline.Start), p)
}

// Timeline is a copy of the session's timeline so far (memory.Recorder).
func (x *Session) Timeline() memory.Timeline {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.timeline.Clone()
}

// tick is what one sample read; each sum counts only where its flag says it was read.
type tick struct {
	devOK, procSeen, hostOK bool
	devSum, procSum, host   uint64
}

// addToWindows folds a sample into every open window's peaks (per GPU from devUsed and
// procUsed).
func (x *Session) addToWindows(t tick) {
	for _, w := range x.windows {
		w.samples++
		if t.devOK {
			w.devSeen = true
			w.dev = max(w.dev, t.devSum)
			for i, v := range x.devUsed {
				w.perDev[i] = max(w.perDev[i], v)
			}
		}
		if t.procSeen {
			w.procSeen = true
			w.proc = max(w.proc, t.procSum)
			for i, v := range x.procUsed {
				w.perProc[i] = max(w.perProc[i], v)
			}
		}
		if t.hostOK {
			w.hostSeen = true
			w.host = max(w.host, t.host)
		}
	}
}

// queryProcesses reads GPU i's process list into procUsed[i] and procHas[i], and remembers
// the device counter it belongs to. A failed query leaves the GPU's last value and makes the
// next sample query again.
func (x *Session) queryProcesses(i int, d nvml.Device) {
	x.procQueries++
	ps, ret := d.GetComputeRunningProcesses()
	switch ret {
	case nvml.SUCCESS:
	case nvml.ERROR_NO_PERMISSION, nvml.ERROR_NOT_SUPPORTED:
		x.procOff = true
		x.note(fmt.Sprintf("nvml per-process query on GPU %d: %v; %s left out, %s only", i, ret, checks.SourceNVMLProcess, checks.SourceNVMLDevice))
		return
	default:
		x.fail("compute processes", i, ret)
		x.procStale = true
		return
	}
	var sum uint64
	has := false
	for _, p := range ps {
		if !x.inTree[p.Pid] {
			continue
		}
		if p.UsedGpuMemory == notAvailable {
			x.procOff = true
			x.note(
				fmt.Sprintf("nvml reports no per-process memory on GPU %d (pid %d); %s left out, %s only", i, p.Pid, checks.SourceNVMLProcess,
					checks.SourceNVMLDevice),
			)
			return
		}
		sum += p.UsedGpuMemory
		has = true
	}
	x.procUsed[i], x.procHas[i] = sum, has
	x.devAtQuery[i] = x.devUsed[i]
}

// fail notes an NVML error once per call, GPU and code.
func (x *Session) fail(call string, dev int, ret nvml.Return) {
	key := call + "/" + strconv.Itoa(dev) + "/" + strconv.Itoa(int(ret))
	if x.failed[key] {
		return
	}
	if x.failed == nil {
		x.failed = map[string]bool{}
	}
	x.failed[key] = true
	x.note(fmt.Sprintf("nvml %s on GPU %d failed: %v", call, dev, ret))
}

// window accumulates the peaks of the samples taken while it is open.
type window struct {
	x                           *Session
	samples                     int
	dev, proc, host             uint64
	devSeen, procSeen, hostSeen bool
	perDev, perProc             []uint64
	peaks                       *memory.Peaks
}

// Window opens a measurement window and takes a sample at once, so that even a window
// shorter than the interval holds at least two samples.
func (x *Session) Window() memory.Window {
	nd := len(x.s.devices)
	w := &window{x: x, perDev: make([]uint64, nd), perProc: make([]uint64, nd)}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.windows = append(x.windows, w)
	x.sampleLocked(time.Now(), true)
	return w
}

// End closes the window after a last sample and returns its peaks; a second End returns the
// same peaks.
func (w *window) End() memory.Peaks {
	x := w.x
	x.mu.Lock()
	defer x.mu.Unlock()
	if w.peaks != nil {
		return *w.peaks
	}
	x.sampleLocked(time.Now(), true)
	if i := slices.Index(x.windows, w); i >= 0 {
		x.windows = slices.Delete(x.windows, i, i+1)
	}
	p := memory.Peaks{MiB: map[string]float64{}, Samples: w.samples}
	multi := len(w.perDev) > 1
	if w.devSeen {
		p.MiB[checks.SourceNVMLDevice] = mib(w.dev)
		if multi {
			for i, v := range w.perDev {
				p.MiB[checks.SourceNVMLDevice+":"+strconv.Itoa(i)] = mib(v)
			}
		}
	}
	if w.procSeen {
		p.MiB[checks.SourceNVMLProcess] = mib(w.proc)
		if multi {
			for i, v := range w.perProc {
				p.MiB[checks.SourceNVMLProcess+":"+strconv.Itoa(i)] = mib(v)
			}
		}
	}
	if w.hostSeen {
		p.MiB[checks.SourceHostAnon] = mib(w.host)
	}
	p.Notes = slices.Clone(x.notes)
	if len(x.s.devices) > 0 && !x.procOff && !w.procSeen {
		p.Notes = append(
			p.Notes,
			fmt.Sprintf(
				"%s: no process of the server's tree (pid %d, %d processes) held GPU memory in NVML's list during the window (none allocated yet, "+
					"or a PID namespace apart from the driver's)",
				checks.SourceNVMLProcess,
				x.pid,
				x.treeLen,
			),
		)
	}
	if !x.hostOff && !w.hostSeen {
		p.Notes = append(p.Notes, fmt.Sprintf("%s: no process of the server's tree (pid %d) could be read", checks.SourceHostAnon, x.pid))
	}
	w.peaks = &p
	return p
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// notAvailable is NVML_VALUE_NOT_AVAILABLE as an unsigned field holds it: the driver's answer
// for a process's memory when it may not tell (e.g. under some virtualisation).
const notAvailable = ^uint64(0)

// sleeper waits until an absolute point of a monotonic clock, in nanoseconds.
type sleeper interface {
	now() int64
	sleepUntil(t int64)
}

// runtimeSleeper uses Go's timers (and so the fake clock of testing/synctest); its clock
// counts from epoch.
type runtimeSleeper struct{ epoch time.Time }

func (r runtimeSleeper) now() int64 { return int64(time.Since(r.epoch)) }

func (r runtimeSleeper) sleepUntil(t int64) {
	if d := time.Duration(t - r.now()); d > 0 {
		time.Sleep(d)
	}
}

// Describe fills in what the sampler's sources say about the machine: the CPU model (cpuinfo
// of the procDir mount), and from NVML the driver version, the CUDA version the driver
// supports, and every sampled GPU's name and UUID. Without NVML it leaves the GPU fields out
// and sets NVMLNote to why; a call that fails leaves its field out and is named in NVMLNote.
// It never fails the run.
func (s *Sampler) Describe(m *results.Machine) {
	m.CPU = hostmem.CPUModel(s.opts.procDir)
	if s.unavailable != "" {
		m.NVMLNote = s.unavailable
		return
	}
	var failed []string
	defer func() {
		if p := recover(); p != nil { // see init: go-nvml may panic on a broken install
			failed = append(failed, fmt.Sprintf("panicked: %v", p))
		}
		if len(failed) > 0 {
			m.NVMLNote = "nvml: " + strings.Join(failed, "; ")
		}
	}()
	if v, ret := s.lib.SystemGetDriverVersion(); ret == nvml.SUCCESS {
		m.Driver = v
	} else {
		failed = append(failed, "driver version: "+ret.Error())
	}
	if v, ret := s.lib.SystemGetCudaDriverVersion(); ret == nvml.SUCCESS {
		m.CUDA = cudaVersion(v)
	} else {
		failed = append(failed, "CUDA version: "+ret.Error())
	}
	for i, d := range s.devices {
		g := results.MachineGPU{Index: i}
		if n, ret := d.GetName(); ret == nvml.SUCCESS {
			g.Name = n
		} else {
			failed = append(failed, fmt.Sprintf("GPU %d name: %v", i, ret))
		}
		if u, ret := d.GetUUID(); ret == nvml.SUCCESS {
			g.UUID = u
		} else {
			failed = append(failed, fmt.Sprintf("GPU %d UUID: %v", i, ret))
		}
		m.GPUs = append(m.GPUs, g)
	}
}

// cudaVersion writes nvmlSystemGetCudaDriverVersion's number as CUDA's major.minor: the
// driver encodes 12.8 as 12080 (NVML's NVML_CUDA_DRIVER_VERSION_MAJOR/MINOR macros: v/1000
// and v%1000/10).
func cudaVersion(v int) string {
	return strconv.Itoa(v/1000) + "." + strconv.Itoa(v%1000/10)
}
