package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/diffusion-check/diffusion-check/baselines"
	"github.com/diffusion-check/diffusion-check/internal/clip"
	"github.com/diffusion-check/diffusion-check/internal/compare"
	"github.com/diffusion-check/diffusion-check/internal/gpumem"
	"github.com/diffusion-check/diffusion-check/internal/proc"
	"github.com/diffusion-check/diffusion-check/plan"
	"github.com/diffusion-check/diffusion-check/report"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/runner"
	"github.com/diffusion-check/diffusion-check/suite"
)

// runOptions are the flags of run.
type runOptions struct {
	suitePath   string
	lane        string
	partition   string
	planPath    string
	cases       string
	out         string
	mode        runner.Mode
	clipScorer  string
	clipTimeout time.Duration
	// qualityScorer and qualityTimeout are the scorer of the quality floors (--quality-scorer).
	qualityScorer  string
	qualityTimeout time.Duration
	profile        string
	gpu            string
	memInterval    time.Duration
	heartbeat      time.Duration
	gtMiB          int64
	threads        int
	force          bool
	// allowUntrusted lets run start server commands under events where they may be a pull
	// request's code (trustedEvent).
	allowUntrusted bool
	// sel plans again with the plan job's selection, when there is no plan file.
	sel selectOptions
}

func (o *runOptions) register(fs *flag.FlagSet, e env) {
	o.mode = runner.ModeCheck
	fs.StringVar(&o.suitePath, "suite", "", "suite `FILE` (YAML)")
	fs.StringVar(&o.lane, "lane", "", "run only the cases of lane `L` (default: all lanes)")
	fs.StringVar(&o.partition, "partition", "0/1", "run partition `I/N` (0-based) of the plan that \"plan --partitions N\" makes")
	fs.StringVar(&o.planPath, "plan", "", "plan `FILE` written by plan (default: plan the suite here with N partitions)")
	fs.StringVar(&o.cases, "cases", "", "comma-separated case `IDS` to run (default: all of the partition)")
	fs.StringVar(&o.out, "out", "diffusion-check-out", "output `DIR`: results.json, requests.jsonl, artifacts/")
	fs.Var(&o.mode, "mode",
		"`MODE`: check; baseline: record perf and memory without enforcing them, for \"diffusion-check baseline\"; gt: write ground truth from the outputs")
	fs.StringVar(&o.clipScorer, "clip-scorer", e.getenv("DIFFUSION_CHECK_CLIP_SCORER"),
		"CLIP scorer `COMMAND` (split on spaces) for consistency.clip; default $DIFFUSION_CHECK_CLIP_SCORER; empty skips the check")
	fs.DurationVar(&o.clipTimeout, "clip-timeout", clip.DefaultTimeout, "time limit of one CLIP scorer run")
	fs.StringVar(&o.qualityScorer, "quality-scorer", e.getenv("DIFFUSION_CHECK_QUALITY_SCORER"),
		"quality scorer `COMMAND` (split on spaces) for the suite's quality_thresholds floors (quality.*); default $DIFFUSION_CHECK_QUALITY_SCORER; "+
			"empty fails every floor set")
	fs.DurationVar(&o.qualityTimeout, "quality-timeout", clip.DefaultTimeout, "time limit of one quality scorer run")
	fs.StringVar(&o.profile, "profile", baselines.DefaultProfile, "tolerance `PROFILE` of the perf baseline file (pr_test, long_term)")
	fs.StringVar(&o.gpu, "gpu", "", "GPU `CLASS` whose baselines apply (default: the suite's, else detected)")
	fs.DurationVar(&o.memInterval, "memory-interval", time.Millisecond, "GPU memory sampling interval (NVML); host memory is read every 10ms")
	fs.Int64Var(&o.gtMiB, "gt-memory-mib", compare.DefaultCacheBytes>>20,
		"decoded ground truth a case keeps in memory for its requests (`MIB`); 0 decodes it for each request")
	fs.IntVar(
		&o.threads,
		"validation-threads",
		0,
		"threads that validate an output (the metric, and each ffmpeg decoder) beside the next request (`N`); default: the suite's validation_threads, "+
			"else half the cores",
	)
	fs.DurationVar(&o.heartbeat, "heartbeat", runner.DefaultHeartbeat, "while a server starts or a request runs, print what it is doing this often")
	fs.BoolVar(
		&o.force,
		"force",
		false,
		"run into an --out that holds an earlier run, removing its results.json, requests.jsonl, artifacts/ and servers/ first (without it such an --out is refused)",
	)
	o.sel.register(fs, false)
	fs.BoolVar(
		&o.allowUntrusted,
		"allow-untrusted",
		false,
		"start the suite's server commands under pull_request_target or a fork's workflow_run, "+
			"where they are a pull request's code running with this repository's secrets",
	)
}

func runCmd(ctx context.Context, e env, args []string) (int, error) {
	var o runOptions
	fs := newFlags("run", e)
	o.register(fs, e)
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if !o.allowUntrusted {
		if err := trustedEvent(ctx, e); err != nil {
			return 0, err
		}
	}
	if fs.NArg() > 0 {
		return 0, usagef("unexpected arguments %q", fs.Args())
	}
	opts, closeMem, err := o.runnerOptions(ctx, e)
	if err != nil {
		return 0, err
	}
	defer closeMem()
	if opts.Tools, err = probeMediaTools(ctx, e); err != nil {
		return 0, err
	}
	if e.github().Actions {
		lg := &actionsLog{w: e.stderr}
		defer lg.close()
		opts.Progress, opts.ServerLog = lg.progress(), lg.server
	}
	// A server worker that leaves its process group (setsid) and loses its server is then
	// reparented here, not to PID 1: within reach of the stop that ends it, and reaped here.
	if err := proc.BecomeSubreaper(); err != nil {
		fmt.Fprintf(e.stderr, "warning: %v; a server worker that calls setsid may outlive its server\n", err)
	}
	res, err := runner.Run(ctx, opts)
	if res != nil {
		if terr := e.untrusted(e.stdout, func() error { return report.Table(e.stdout, res) }); terr != nil {
			return 0, terr
		}
	}
	if err != nil {
		return 0, firstSuiteHint(err, opts.Suite, o.mode)
	}
	outs := map[string]any{
		"verdict":      string(res.Status),
		"failed":       strconv.Itoa(results.TallyRequests(*res).Failed()),
		"results_path": filepath.Join(o.out, results.ResultsFile),
	}
	if o.mode == runner.ModeGT {
		path, err := writeGroundTruthTable(o.out, res)
		if err != nil {
			return 0, err
		}
		outs["report_path"] = path
	}
	if err := e.setOutputs(outs); err != nil {
		return 0, err
	}
	return verdictExit(res.Status), nil
}

// checkFlags is the usage error of the first flag of run that is missing or out of range.
func (o *runOptions) checkFlags() error {
	switch {
	case o.suitePath == "":
		return usagef("--suite is required")
	case o.memInterval <= 0:
		return usagef("--memory-interval %s: must be > 0", o.memInterval)
	case o.heartbeat <= 0:
		return usagef("--heartbeat %s: must be > 0", o.heartbeat)
	case o.threads < 0:
		return usagef("--validation-threads %d: must be ≥ 0 (0: the suite's validation_threads, else half the cores)", o.threads)
	}
	return nil
}

// runnerOptions checks the flags and turns them into the runner's options; the returned
// function releases the memory sampler.
func (o *runOptions) runnerOptions(ctx context.Context, e env) (runner.Options, func(), error) {
	none := func() {}
	if err := o.checkFlags(); err != nil {
		return runner.Options{}, none, err
	}
	overrides, err := baselines.ParseOverrides(e.getenv)
	if err != nil {
		return runner.Options{}, none, usageError{err}
	}
	gtMax, err := gtMaxBytes(e)
	if err != nil {
		return runner.Options{}, none, usageError{err}
	}
	p, err := parsePartition(o.partition)
	if err != nil {
		return runner.Options{}, none, err
	}
	s, err := suite.Load(o.suitePath)
	if err != nil {
		return runner.Options{}, none, usageError{err}
	}
	g := o.gpu
	if g == "" {
		g = s.GPU
	}
	explicit := g != ""
	lane, plan, err := o.plan(ctx, e, s, g, p.Total)
	if err != nil {
		return runner.Options{}, none, err
	}
	exe, err := executable()
	if err != nil {
		return runner.Options{}, none, fmt.Errorf("find own executable for builtin servers: %w", err)
	}
	var ids []string
	if o.cases != "" {
		ids = strings.Split(o.cases, ",")
	}
	// Without a driver (CI, laptops) NVML is unavailable: host memory is still sampled and the
	// GPU memory checks use what the server reports; every result says so.
	mem := gpumem.New(gpumem.Options{Interval: o.memInterval, Visible: e.getenv(cudaVisibleDevices)})
	if why := mem.Unavailable(); why != "" {
		fmt.Fprintf(e.stderr, "memory: %s; GPU memory comes from the server's own reports\n", why)
	}
	if g == "" {
		g = detectGPU(e, mem.DeviceNames())
	}
	resolved, err := resolveFiles(e, mem, g, explicit)
	if err != nil {
		_ = mem.Close()
		return runner.Options{}, none, usageError{err}
	}
	closeMem := func() {
		// After the run: the results are written, so a failed NVML shutdown is only told.
		if err := mem.Close(); err != nil {
			fmt.Fprintf(e.stderr, "memory: %v\n", err)
		}
	}
	return runner.Options{
		Suite: s, Lane: lane, Partition: p, Plan: plan, Cases: ids, Out: o.out, Force: o.force, Mode: o.mode,
		Commit:            headCommit(ctx, e),
		GPU:               g,
		Machine:           machine(e, mem, resolved.Runner),
		Resolved:          resolved,
		Executable:        exe,
		Environ:           e.environ(),
		Progress:          e.stderr,
		Heartbeat:         o.heartbeat,
		Memory:            mem,
		Perf:              runner.PerfOptions{Profile: o.profile, Overrides: overrides},
		CLIPScorer:        clipScorerOf(o.clipScorer, o.clipTimeout),
		QualityScorer:     clipScorerOf(o.qualityScorer, o.qualityTimeout),
		GTMemory:          gtMemory(o.gtMiB),
		GTCache:           gtCacheDir(e),
		GTMaxBytes:        gtMax,
		ValidationThreads: o.threads,
		// SGLang's harness compares the value with "1" exactly (test_server_common.py).
		SkipConsistency: e.getenv("SGLANG_SKIP_CONSISTENCY") == "1",
	}, closeMem, nil
}

// plan is the split the partition belongs to, and the lane: --plan's file (whose lane is the
// default), or the suite planned here into total partitions.
func (o *runOptions) plan(ctx context.Context, e env, s *suite.Suite, gpu string, total int) (string, *plan.Plan, error) {
	lane := o.lane
	selecting, err := o.sel.active()
	if err != nil {
		return "", nil, err
	}
	if o.planPath == "" {
		// The split must be the one the plan job computed, which knows no detected GPU: plan
		// with the GPU class given on the command line or in the suite, before detection,
		// and with the same selection (the same --changed-files or --changed-since).
		plan, err := o.sel.selectedPlan(ctx, e, s, lane, gpu, total, 0, 0)
		if err != nil {
			return "", nil, err
		}
		return lane, plan, nil
	}
	if selecting {
		return "", nil, usagef("--plan %s holds the plan job's selection already; --changed-files and --changed-since apply only without --plan", o.planPath)
	}
	plan, err := loadPlan(ctx, o.planPath, s)
	if err != nil {
		return "", nil, err
	}
	switch {
	case lane == "":
		lane = plan.Lane
	case lane != plan.Lane:
		return "", nil, usagef("--lane %s, but plan %s is for lane %q", lane, o.planPath, plan.Lane)
	}
	return lane, plan, nil
}

// parsePartition reads "I/N" with 0 ≤ I < N.
func parsePartition(s string) (results.Partition, error) {
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return results.Partition{}, usagef("--partition %q: want I/N with 0 ≤ I < N, e.g. 0/3", s)
	}
	return results.Partition{Index: i, Total: n}, nil
}

// clipScorerOf is the scorer of a --clip-scorer or --quality-scorer command line, nil when it
// is empty.
func clipScorerOf(command string, timeout time.Duration) *clip.Scorer {
	if argv := strings.Fields(command); len(argv) > 0 {
		return &clip.Scorer{Command: argv, Timeout: timeout}
	}
	return nil
}

// resolveFiles chooses the data files of the run (baselines.Resolve): the platform of the
// baseline and of the thresholds files as SGLang does (its override variables, the class the
// suite or --gpu names, the first GPU's compute capability from NVML, else the class's), and
// the runner (RUNNER_NAME) whose runner_overrides pool applies.
func resolveFiles(e env, mem *gpumem.Sampler, class string, explicit bool) (baselines.Resolved, error) {
	in := baselines.ResolveInput{Class: class, Explicit: explicit, Getenv: e.getenv}
	in.Major, in.Minor = mem.Capability()
	if names := mem.DeviceNames(); len(names) > 0 {
		in.Device = names[0]
	}
	return baselines.Resolve(in)
}

// runnerLabelsEnv names the runner's labels for results.json, comma-separated: the job's
// environment does not hold them (the runner context has no labels, actions/runner#821), so
// a workflow that wants them passes its runs-on list, e.g. ${{ join(matrix.runs_on, ',') }}.
const runnerLabelsEnv = "DIFFUSION_CHECK_RUNNER_LABELS"

// machine says where this partition runs: the Actions runner (runnerName, RUNNER_NAME as
// baselines.Resolve read it; RUNNER_OS, RUNNER_ARCH, RUNNER_ENVIRONMENT: GitHub's default
// variables), the labels the workflow passes, the host name, and what the memory sampler
// knows (CPU model, NVML's GPUs, driver and CUDA versions). Whatever is missing is left out;
// nothing here fails the run.
func machine(e env, mem *gpumem.Sampler, runnerName string) *results.Machine {
	m := &results.Machine{
		RunnerName:        runnerName,
		RunnerOS:          e.getenv("RUNNER_OS"),
		RunnerArch:        e.getenv("RUNNER_ARCH"),
		RunnerEnvironment: e.getenv("RUNNER_ENVIRONMENT"),
	}
	for _, l := range strings.Split(e.getenv(runnerLabelsEnv), ",") {
		if l = strings.TrimSpace(l); l != "" && !slices.Contains(m.RunnerLabels, l) {
			m.RunnerLabels = append(m.RunnerLabels, l)
		}
	}
	if h, err := os.Hostname(); err == nil {
		m.Hostname = h
	}
	mem.Describe(m)
	return m
}

// detectGPU picks the GPU class of the baselines from the first GPU's NVML name, when neither
// --gpu nor the suite names one, and says what it chose.
func detectGPU(e env, names []string) string {
	if len(names) == 0 {
		return ""
	}
	class, ok := baselines.GPUClass(names[0])
	if !ok {
		fmt.Fprintf(e.stderr, "gpu: %q is not in the GPU class table; pass --gpu or set gpu: in the suite\n", names[0])
		return ""
	}
	fmt.Fprintf(e.stderr, "gpu: %s (detected from %q)\n", class, names[0])
	return class
}
