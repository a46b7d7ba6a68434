package baselines

import "cmp"

// Resolved says which data files apply to a run and why: the platform of the perf baseline file,
// the platform of the thresholds file and of the ground truth, and the runner whose
// runner_overrides pool applies. One resolver (Resolve) decides it for cmd, plan and runner;
// each reads its files through it (BaselinesFile, Thresholds, GroundTruthPlatform).
type Resolved struct {
	// Perf and Consistency are the platforms chosen as SGLang does (ChoosePlatform), with why.
	Perf, Consistency Platform
	// Class is the GPU class the platforms were chosen for: the file of a folder of
	// <class>.json when no platform was chosen.
	Class string
	// Runner is RUNNER_NAME, which chooses the runner_overrides pool of the baseline file.
	Runner string
}

// ResolveInput is what Resolve decides from: the GPU (its class, whether --gpu or the suite
// named it, NVML's compute capability and device name) and the environment (the platform
// override variables and RUNNER_NAME; nil reads none).
type ResolveInput struct {
	Class        string
	Explicit     bool
	Major, Minor int
	Device       string
	Getenv       func(string) string
}

// Resolve chooses the sources of a run: the perf and consistency platforms (ChoosePlatform:
// the override variable, a class that names a platform, the GPU's compute capability, else
// the class's) and the runner (runnerEnv, read here alone). An unknown override value is an
// error naming the variable; the Resolved returned then still hold the class and runner.
func Resolve(in ResolveInput) (Resolved, error) {
	getenv := in.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	src := Resolved{Class: in.Class, Runner: getenv(runnerEnv)}
	p := PlatformInput{Class: in.Class, Explicit: in.Explicit, Major: in.Major, Minor: in.Minor, Device: in.Device}
	var err error
	p.Kind, p.Env = PlatformPerf, getenv(PlatformPerf.Env())
	if src.Perf, err = ChoosePlatform(p); err != nil {
		return src, err
	}
	p.Kind, p.Env = PlatformConsistency, getenv(PlatformConsistency.Env())
	src.Consistency, err = ChoosePlatform(p)
	return src, err
}

// BaselinesFile is the perf baseline file of dir, the suite's baselines: dir itself, or the
// <platform>.json of a folder of them (Find).
func (s Resolved) BaselinesFile(dir string) (string, error) {
	return Find(dir, cmp.Or(s.Perf.Name, s.Class))
}

// Thresholds reads the consistency thresholds of path, the suite's thresholds: a file, or the
// <platform>.json of a folder of them (ThresholdsFor).
func (s Resolved) Thresholds(path string) (*Thresholds, error) {
	return ThresholdsFor(path, cmp.Or(s.Consistency.Name, s.Class))
}

// GroundTruthPlatform is the platform folder the ground truth is looked up in first
// (ConsistencyPlatform).
func (s Resolved) GroundTruthPlatform() string {
	return consistencyPlatform(cmp.Or(s.Consistency.Name, s.Class))
}
