package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/diffusion-check/diffusion-check/baselines"
	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/compare"
	"github.com/diffusion-check/diffusion-check/internal/gpumem"
	"github.com/diffusion-check/diffusion-check/report"
	"github.com/diffusion-check/diffusion-check/runner"
	"github.com/diffusion-check/diffusion-check/runner/suite"
)

func runCmd(ctx context.Context, e env, args []string) (int, error) {
	fs := newFlags("run", e)
	suitePath := fs.String("suite", "", "suite file (YAML)")
	lane := fs.String("lane", "", "run only the cases of this lane (default: all lanes)")
	partition := fs.String("partition", "0/1", "run partition I of N (0-based), as I/N, of the plan `plan --partitions N` makes")
	planPath := fs.String("plan", "", "plan file written by `plan` (default: plan the suite here with N partitions)")
	cases := fs.String("cases", "", "comma-separated case ids to run (default: all of the partition)")
	out := fs.String("out", "diffusion-check-out", "output folder: results.json, requests.jsonl, artifacts/")
	mode := fs.String("mode", "check", "check; baseline: record perf and memory without enforcing them, for `diffusion-check baseline`; gt: write ground truth from the outputs")
	clipScorer := fs.String("clip-scorer", e.getenv("DIFFUSION_CHECK_CLIP_SCORER"), "CLIP scorer command (split on spaces) for consistency.clip; default $DIFFUSION_CHECK_CLIP_SCORER; empty skips the check")
	clipTimeout := fs.Duration("clip-timeout", checks.DefaultCLIPTimeout, "time limit of one CLIP scorer run")
	profile := fs.String("profile", baselines.DefaultProfile, "tolerance profile of the perf baseline file (pr_test, long_term)")
	gpu := fs.String("gpu", "", "GPU class whose baselines apply (default: the suite's)")
	gtMiB := fs.Int64("gt-memory-mib", compare.DefaultCacheBytes>>20, "decoded ground truth a case keeps in memory for its requests (MiB); 0 decodes it for each request")
	memInterval := fs.Duration("memory-interval", time.Millisecond, "GPU memory sampling interval (NVML); host memory is read every 10ms")
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if fs.NArg() > 0 {
		return 0, usagef("unexpected arguments %q", fs.Args())
	}
	if *suitePath == "" {
		return 0, usagef("--suite is required")
	}
	if *mode != "check" && *mode != runner.ModeBaseline && *mode != runner.ModeGT {
		return 0, usagef("--mode %s: want check, baseline or gt", *mode)
	}
	overrides, err := baselines.ParseOverrides(e.getenv)
	if err != nil {
		return 0, usageError{err}
	}
	p, err := parsePartition(*partition)
	if err != nil {
		return 0, err
	}
	s, err := suite.Load(*suitePath)
	if err != nil {
		return 0, usageError{err}
	}
	var plan *runner.Plan
	if *planPath != "" {
		if plan, err = loadPlan(*planPath, s); err != nil {
			return 0, err
		}
		switch {
		case *lane == "":
			*lane = plan.Lane
		case *lane != plan.Lane:
			return 0, usagef("--lane %s, but plan %s is for lane %q", *lane, *planPath, plan.Lane)
		}
	}
	exe, err := executable()
	if err != nil {
		return 0, fmt.Errorf("find own executable for builtin servers: %w", err)
	}
	var ids []string
	if *cases != "" {
		ids = strings.Split(*cases, ",")
	}
	g := *gpu
	if g == "" {
		g = s.GPU
	}
	if plan == nil {
		// The split must be the one the plan job computed, which knows no detected GPU: plan
		// with the GPU class given on the command line or in the suite, before detection.
		if plan, err = runner.PlanSuite(s, *lane, g, p.Total); err != nil {
			return 0, usageError{err}
		}
	}
	if *memInterval <= 0 {
		return 0, usagef("--memory-interval %s: must be > 0", *memInterval)
	}
	// Without a driver (CI, laptops) NVML is unavailable: host memory is still sampled and the
	// GPU memory checks use what the server reports; every result says so.
	mem := gpumem.New(gpumem.Options{Interval: *memInterval})
	defer mem.Close()
	if why := mem.Unavailable(); why != "" {
		fmt.Fprintf(e.stderr, "memory: %s; GPU memory comes from the server's own reports\n", why)
	}
	if g == "" {
		g = detectGPU(e, mem.DeviceNames())
	}
	res, err := runner.Run(ctx, runner.Options{
		Suite: s, Lane: *lane, Partition: p, Plan: plan, Cases: ids, Out: *out, Mode: *mode,
		Commit:     e.getenv("GITHUB_SHA"),
		GPU:        g,
		Executable: exe,
		Environ:    os.Environ(),
		Progress:   e.stderr,
		Memory:     mem,
		Perf:       runner.PerfOptions{Profile: *profile, Overrides: overrides},
		CLIPScorer: clipScorerOf(*clipScorer, *clipTimeout),
		GTMemory:   gtMemory(*gtMiB),
	})
	if err != nil && res == nil {
		return 0, usageError{err}
	}
	if res != nil {
		if terr := report.Table(e.stdout, res); terr != nil {
			return 0, terr
		}
	}
	if err != nil {
		return 0, err
	}
	if err := e.setOutputs(map[string]any{
		"verdict":      string(res.Status),
		"failed":       strconv.Itoa(checks.TallyRequests(*res).Failed()),
		"results_path": filepath.Join(*out, runner.ResultsFile),
	}); err != nil {
		return 0, err
	}
	return checks.ExitCode(res.Status), nil
}

// parsePartition reads "I/N" with 0 ≤ I < N.
func parsePartition(s string) (checks.Partition, error) {
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return checks.Partition{}, usagef("--partition %q: want I/N with 0 ≤ I < N, e.g. 0/3", s)
	}
	return checks.Partition{Index: i, Total: n}, nil
}

// clipScorerOf is the CLIP scorer of a --clip-scorer command line, nil when it is empty.
func clipScorerOf(command string, timeout time.Duration) *checks.CLIPScorer {
	if argv := strings.Fields(command); len(argv) > 0 {
		return &checks.CLIPScorer{Command: argv, Timeout: timeout}
	}
	return nil
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
