package baselines

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/strictdecode"
	"github.com/diffusion-check/diffusion-check/results"
)

// DefaultProfile is the tolerance profile of PR runs.
const DefaultProfile = "pr_test"

// defaultImprovementThreshold applies when a file has no improvement_reporting.threshold, as
// SGLang's loader does.
const defaultImprovementThreshold = 0.2

// Tolerances is one tolerance profile of a baseline file (relative: 0.25 is 25%).
type Tolerances struct {
	E2E             float64
	DenoiseStage    float64
	NonDenoiseStage float64
	DenoiseStep     float64
	DenoiseAgg      float64
	LoadPeakVRAM    float64 // 0.01 when the profile has none
	RuntimePeakVRAM float64 // 0.02 when the profile has none
	// Load is the profile's "load" tolerance (ToleranceConfig.load) when HasLoad; without
	// one perf.load takes the E2E tolerance (LoadTolerance). SGLang reads no variable for it.
	Load    float64
	HasLoad bool
}

// LoadTolerance is the tolerance of perf.load: the profile's "load" when it has one, else the
// E2E tolerance (the profile's, or its env override). SGLang's ToleranceConfig reads an
// optional "load" (web4hub/Sgl @ 4e66c7cc, on or after 2026-09-23); the validator that applies
// it could not be read, and test/runner/PERFORMANCE.md (sgl-project/sglang @ 2d98cbd9) says
// load starts of 187–208 s against a 116.5 s reference "still fail", which a 25% limit does and
// the non-denoise stage tolerance (0.8) would not (reading).
func (t Tolerances) LoadTolerance() float64 {
	if !t.HasLoad {
		return t.E2E
	}
	return t.Load
}

// tolerance is one tolerance of a profile that SGLang's harness lets a variable override: its
// key in a baseline file, the variable (ToleranceConfig.load_profile, testcase_configs.py @
// a7ec6b97f786), whether a profile must have it, and its field of Tolerances. The profile's
// optional "load" has no variable and is read apart (profile).
type tolerance struct {
	key      string
	env      string
	required bool
	field    func(*Tolerances) *float64
}

// tolerances is every tolerance a variable can override, in SGLang's order: the one list the
// decoder, the env overrides and a new file's skeleton read.
var tolerances = []tolerance{
	{"e2e", "SGLANG_E2E_TOLERANCE", true, func(t *Tolerances) *float64 { return &t.E2E }},
	{"denoise_stage", "SGLANG_STAGE_TIME_TOLERANCE", true, func(t *Tolerances) *float64 { return &t.DenoiseStage }},
	{"non_denoise_stage", "SGLANG_NON_DENOISE_STAGE_TIME_TOLERANCE", true, func(t *Tolerances) *float64 { return &t.NonDenoiseStage }},
	{"denoise_step", "SGLANG_DENOISE_STEP_TOLERANCE", true, func(t *Tolerances) *float64 { return &t.DenoiseStep }},
	{"denoise_agg", "SGLANG_DENOISE_AGG_TOLERANCE", true, func(t *Tolerances) *float64 { return &t.DenoiseAgg }},
	{"load_peak_vram", "SGLANG_LOAD_PEAK_VRAM_TOLERANCE", false, func(t *Tolerances) *float64 { return &t.LoadPeakVRAM }},
	{"runtime_peak_vram", "SGLANG_RUNTIME_PEAK_VRAM_TOLERANCE", false, func(t *Tolerances) *float64 { return &t.RuntimePeakVRAM }},
}

// toleranceOf is the tolerance of a key, or false for a key no profile has.
func toleranceOf(key string) (tolerance, bool) {
	i := slices.IndexFunc(tolerances, func(t tolerance) bool { return t.key == key })
	if i < 0 {
		return tolerance{}, false
	}
	return tolerances[i], true
}

// Overrides replace tolerances of a profile, by key ("e2e", "load_peak_vram", …): SGLang's env
// overrides of the profile in force (ParseOverrides). Every key is one of the file format's;
// the memory ones replace the profile's value or its default (0.01 and 0.02).
type Overrides map[string]float64

// Apply returns t with every override in place of its value.
func (o Overrides) Apply(t Tolerances) Tolerances {
	for k, v := range o {
		if tol, ok := toleranceOf(k); ok {
			*tol.field(&t) = v
		}
	}
	return t
}

// ParseOverrides reads the env overrides through getenv (cmd passes its environment; nothing
// else reads it). A value that is not a non-negative number is an error naming the variable.
func ParseOverrides(getenv func(string) string) (Overrides, error) {
	o := Overrides{}
	var errs []error
	for _, t := range tolerances {
		s := strings.TrimSpace(getenv(t.env))
		if s == "" {
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			errs = append(errs, fmt.Errorf("%s=%q: want a tolerance ≥ 0 such as 0.25", t.env, s))
			continue
		}
		o[t.key] = v
	}
	return o, errors.Join(errs...)
}

// File is a perf baseline file, decoded. It keeps the document it was read from, so that
// regeneration rewrites only what it measured.
type File struct {
	Path string
	// Profiles maps a profile name to its tolerances; a flat legacy file has the one
	// profile "" that every name selects.
	Profiles             map[string]Tolerances
	ImprovementThreshold float64
	StepFractions        []float64
	// Scenarios by id (= case id), with the memory of top-level maps merged in, and, in a
	// file chosen for one runner (ForRunner), its pool's overrides applied.
	Scenarios map[string]*Scenario
	// Pools are the file's runner_overrides, in file order (pools.go).
	Pools []Pool
	// Pool is the runner_overrides prefix applied by ForRunner when InPool; a file of the
	// default pool has InPool false (an empty prefix is a pool of every runner).
	Pool   string
	InPool bool
	// Warnings are soft problems of the file as it applies to a run: keys it sets that
	// SGLang's loader ignores.
	Warnings []string
	// Merged are the vendor files merged into the file as it applies to a run (MergeVendors).
	Merged []Merged

	doc *node
}

// Scenario is one entry of "scenarios" (or of the top-level memory maps only). A nil
// pointer means the file does not have that value.
type Scenario struct {
	ID                      string
	InScenarios             bool // false: only in the top-level memory maps
	Stages                  results.Stages
	StepsMs                 map[int]float64
	E2EMs                   *float64
	AvgDenoiseMs            *float64
	MedianDenoiseMs         *float64
	EstimatedFullTestTimeS  *float64
	ExpectedLoadMs          *float64
	LoadPeakVRAMMiB         *float64
	RuntimePeakVRAMMiB      *float64
	WarmupPeakVRAMMiB       *float64
	LoadPeakAllocatedMiB    *float64
	RuntimePeakAllocatedMiB *float64
	LoadPeakHostAnonMiB     *float64
	RuntimePeakHostAnonMiB  *float64
	// From is the vendor file the scenario was merged from (MergeVendors); empty for the
	// file's own.
	From string
	// TimingTolerance is the scenario's timing_tolerance: it replaces the wall-clock
	// tolerances (e2e, denoise and stage timings) of the profile for this scenario; nil when
	// the scenario has none.
	TimingTolerance *float64
}

// Load reads a perf baseline file. Every problem found is reported at once, each naming the
// file, line and key path: "h100.json:14: scenarios.x.expected_e2e_ms: want a number".
func Load(path string) (*File, error) {
	data, err := readInput(path)
	if err != nil {
		return nil, fmt.Errorf("read baselines: %w", err)
	}
	return Parse(path, data)
}

// ErrNoGPUClass is returned (wrapped) by Find for a folder of baseline files and no GPU class.
var ErrNoGPUClass = errors.New("the GPU class is unknown")

// Find returns the baseline file for a GPU class: dir itself when it is a file, else
// dir/<gpu>.json. A folder without a gpu class is an error wrapping ErrNoGPUClass.
func Find(dir, gpu string) (string, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("baselines %s: %w", dir, err)
	}
	if !fi.IsDir() {
		if IsSpreadPath(dir) {
			return "", fmt.Errorf("baselines %s is a spread file (the sidecar of %s), not a baseline file", dir, strings.TrimSuffix(dir, SpreadSuffix)+".json")
		}
		return dir, nil
	}
	if gpu == "" {
		return "", fmt.Errorf("baselines %s is a folder of <gpu>.json files, but %w: set gpu: in the suite or pass --gpu", dir, ErrNoGPUClass)
	}
	path := filepath.Join(dir, strings.ToLower(gpu)+".json")
	if IsSpreadPath(path) {
		return "", fmt.Errorf("GPU class %q names the spread file %s, not a baseline file", gpu, path)
	}
	return path, nil
}

// Parse decodes a perf baseline file's contents; path names it in messages.
func Parse(path string, data []byte) (*File, error) {
	name := path
	doc, err := parseJSON(name, data)
	if err != nil {
		return nil, err
	}
	d := &decoder{strictdecode.Problems{File: name}}
	f := &File{Path: path, doc: doc, Profiles: map[string]Tolerances{}, Scenarios: map[string]*Scenario{},
		ImprovementThreshold: defaultImprovementThreshold}
	if !d.object(doc, "(top level)") {
		return nil, d.Err()
	}
	d.tolerances(f, doc.get("tolerances"), doc.lineOf("tolerances"))
	if ir := doc.get("improvement_reporting"); ir != nil && d.object(ir, "improvement_reporting") {
		if v := d.optNumber(ir, "threshold", "improvement_reporting"); v != nil {
			f.ImprovementThreshold = *v
		}
	}
	f.StepFractions = d.fractions(doc)
	if sc := doc.get("scenarios"); sc == nil {
		d.Addf(doc.line, "scenarios", "missing; a baseline file needs a \"scenarios\" object")
	} else if d.object(sc, "scenarios") {
		for i, id := range sc.keys {
			f.Scenarios[id] = d.scenario("scenarios."+id, id, sc.vals[i])
			if ov := sc.vals[i].get("tolerance_overrides"); ov != nil {
				d.Addf(ov.line, "scenarios."+id+".tolerance_overrides", "not a key of SGLang's baseline files: a scenario widens its wall-clock "+
					"tolerances with timing_tolerance, one number (e.g. 0.5; ScenarioConfig, PR #38457)")
			}
		}
	}
	for _, m := range []struct {
		key string
		dst func(*Scenario) **float64
	}{
		{"load_peak_vram_mb", func(s *Scenario) **float64 { return &s.LoadPeakVRAMMiB }},
		{"runtime_peak_vram_mb", func(s *Scenario) **float64 { return &s.RuntimePeakVRAMMiB }},
	} {
		mp := doc.get(m.key)
		if mp == nil || !d.object(mp, m.key) {
			continue
		}
		for i, id := range mp.keys {
			v, ok := d.number(mp.vals[i], m.key+"."+id)
			if !ok {
				continue
			}
			s := f.Scenarios[id]
			if s == nil {
				s = &Scenario{ID: id}
				f.Scenarios[id] = s
			}
			if dst := m.dst(s); *dst == nil { // a per-scenario value wins over the map
				*dst = &v
			}
		}
	}
	f.Pools = d.pools(doc, f.Scenarios)
	if err := d.Err(); err != nil {
		return nil, err
	}
	return f, nil
}

// tolerances reads "tolerances": profiles of the keys above, or one flat legacy profile.
func (d *decoder) tolerances(f *File, t *node, line int) {
	if t == nil {
		d.Addf(line, "tolerances", "missing; a baseline file needs a tolerance profile (e.g. \"pr_test\")")
		return
	}
	if !d.object(t, "tolerances") {
		return
	}
	if e2e := t.get("e2e"); e2e != nil && e2e.kind != 'o' {
		f.Profiles[""] = d.profile(t, "tolerances")
		return
	}
	for i, name := range t.keys {
		if d.object(t.vals[i], "tolerances."+name) {
			f.Profiles[name] = d.profile(t.vals[i], "tolerances."+name)
		}
	}
	if len(f.Profiles) == 0 {
		d.Addf(t.line, "tolerances", "no profile")
	}
}

func (d *decoder) profile(p *node, keyPath string) Tolerances {
	t := Tolerances{LoadPeakVRAM: checks.DefaultLoadPeakTolerance, RuntimePeakVRAM: checks.DefaultRuntimePeakTolerance}
	for _, tol := range tolerances {
		n := p.get(tol.key)
		if n == nil {
			if tol.required {
				d.Addf(p.line, keyPath+"."+tol.key, "missing")
			}
			continue
		}
		if v, ok := d.number(n, keyPath+"."+tol.key); ok {
			*tol.field(&t) = v
		}
	}
	if n := p.get("load"); n != nil {
		if v, ok := d.number(n, keyPath+".load"); ok {
			t.Load, t.HasLoad = v, true
		}
	}
	return t
}

func (d *decoder) fractions(doc *node) []float64 {
	s := doc.get("sampling")
	if s == nil {
		d.Addf(doc.line, "sampling", "missing; a baseline file needs sampling.step_fractions")
		return nil
	}
	if !d.object(s, "sampling") {
		return nil
	}
	fr := s.get("step_fractions")
	if fr == nil {
		d.Addf(s.line, "sampling.step_fractions", "missing")
		return nil
	}
	if fr.kind != 'a' {
		d.Addf(fr.line, "sampling.step_fractions", "want a list of fractions, got %s", kindName(fr))
		return nil
	}
	var out []float64
	for i, n := range fr.vals {
		kp := fmt.Sprintf("sampling.step_fractions[%d]", i)
		if v, ok := d.number(n, kp); ok {
			if v > 1 {
				d.Addf(n.line, kp, "want a fraction in [0, 1], got %s", n.num)
			}
			out = append(out, v)
		}
	}
	return out
}

// scenario decodes the scenario id at key path kp: the entry of "scenarios", or the values of
// a runner pool's entry for it (pools.go), which set only the keys they have.
func (d *decoder) scenario(kp, id string, n *node) *Scenario {
	s := &Scenario{ID: id, InScenarios: true}
	if !d.object(n, kp) {
		return s
	}
	if st := n.get(stagesKey); st != nil && d.object(st, kp+"."+stagesKey) {
		for i, name := range st.keys {
			if st.vals[i].kind == 'z' {
				// SGLang writes null for a metric that does not apply (per_frame_generation of
				// an image model); it is kept, as NaN, and not checked.
				s.Stages = append(s.Stages, results.Stage{Name: name, Ms: math.NaN()})
				continue
			}
			if v, ok := d.number(st.vals[i], kp+".stages_ms."+name); ok {
				s.Stages = append(s.Stages, results.Stage{Name: name, Ms: v})
			}
		}
	}
	if st := n.get(stepsKey); st != nil && d.object(st, kp+"."+stepsKey) {
		s.StepsMs = map[int]float64{}
		for i, k := range st.keys {
			idx, err := strconv.Atoi(k)
			if err != nil || idx < 0 {
				d.Addf(st.lines[i], kp+".denoise_step_ms."+k, "want a step index ≥ 0 as the key")
				continue
			}
			if v, ok := d.number(st.vals[i], kp+".denoise_step_ms."+k); ok {
				s.StepsMs[idx] = v
			}
		}
	}
	for key, dst := range s.scalars() {
		*dst = d.optNumber(n, key, kp)
	}
	return s
}

// Keys of a scenario that are not single numbers.
const (
	stagesKey = "stages_ms"
	stepsKey  = "denoise_step_ms"
)

// isScenarioKey reports whether key is one of the keys SGLang's ScenarioConfig.from_dict reads.
func isScenarioKey(key string) bool {
	_, ok := (&Scenario{}).scalars()[key]
	return ok || key == stagesKey || key == stepsKey
}

// setKey gives s the value of key that from has; key is one isScenarioKey accepts.
func (s *Scenario) setKey(key string, from *Scenario) {
	switch key {
	case stagesKey:
		s.Stages = from.Stages
	case stepsKey:
		s.StepsMs = from.StepsMs
	default:
		*s.scalars()[key] = *from.scalars()[key]
	}
}

// scalars maps each single-number key of a scenario to its field: the one list the
// scenario decoder and a runner pool's overrides (pools.go) read.
func (s *Scenario) scalars() map[string]**float64 {
	return map[string]**float64{
		"expected_e2e_ms":            &s.E2EMs,
		"expected_avg_denoise_ms":    &s.AvgDenoiseMs,
		"expected_median_denoise_ms": &s.MedianDenoiseMs,
		"estimated_full_test_time_s": &s.EstimatedFullTestTimeS,
		"expected_load_ms":           &s.ExpectedLoadMs,
		"load_peak_vram_mb":          &s.LoadPeakVRAMMiB,
		"runtime_peak_vram_mb":       &s.RuntimePeakVRAMMiB,
		"warmup_peak_vram_mb":        &s.WarmupPeakVRAMMiB,
		"load_peak_allocated_mb":     &s.LoadPeakAllocatedMiB,
		"runtime_peak_allocated_mb":  &s.RuntimePeakAllocatedMiB,
		"load_peak_host_anon_mb":     &s.LoadPeakHostAnonMiB,
		"runtime_peak_host_anon_mb":  &s.RuntimePeakHostAnonMiB,
		"timing_tolerance":           &s.TimingTolerance,
	}
}

// Tolerances returns the profile in force: the named profile (a flat legacy file's only one
// whatever the name), with the env overrides applied. A missing profile is an error listing
// the file's profiles.
func (f *File) Tolerances(profile string, ov Overrides) (Tolerances, error) {
	if profile == "" {
		profile = DefaultProfile
	}
	t, ok := f.Profiles[""]
	if !ok {
		t, ok = f.Profiles[profile]
	}
	if !ok {
		names := slices.Sorted(func(yield func(string) bool) {
			for k := range f.Profiles {
				if !yield(k) {
					return
				}
			}
		})
		return Tolerances{}, fmt.Errorf("%s: tolerances: no profile %q (the file has %s)", f.Path, profile, strings.Join(names, ", "))
	}
	return ov.Apply(t), nil
}

// scenarioTolerances applies a scenario's timing_tolerance: it replaces the wall-clock
// tolerances (e2e, denoise stage, non-denoise stages, denoise step and aggregates) of the
// profile and the env, and leaves the memory tolerances and the load's ("memory guards keep
// the profile tolerance": ScenarioConfig.timing_tolerance, web4hub/Sgl @ 4e66c7cc; SGLang PR
// #38457, 2026-09-08).
func (s *Scenario) scenarioTolerances(t Tolerances) Tolerances {
	if s.TimingTolerance == nil {
		return t
	}
	v := *s.TimingTolerance
	t.E2E, t.DenoiseStage, t.NonDenoiseStage, t.DenoiseStep, t.DenoiseAgg = v, v, v, v, v
	return t
}

// Perf returns what the perf checks of scenario id compare with under tolerances t, and
// whether the file has the scenario under "scenarios". video selects the video step pad.
func (f *File) Perf(id string, t Tolerances, video bool) (checks.PerfBaseline, bool) {
	s := f.Scenarios[id]
	if s == nil || !s.InScenarios {
		return checks.PerfBaseline{}, false
	}
	load := t.LoadTolerance()
	t = s.scenarioTolerances(t)
	return checks.PerfBaseline{
		Scenario:        id,
		Stages:          s.Stages,
		StepsMs:         s.StepsMs,
		E2EMs:           orNaN(s.E2EMs),
		AvgDenoiseMs:    orNaN(s.AvgDenoiseMs),
		MedianDenoiseMs: orNaN(s.MedianDenoiseMs),
		Tol: checks.PerfTolerances{E2E: t.E2E, DenoiseStage: t.DenoiseStage, NonDenoiseStage: t.NonDenoiseStage,
			DenoiseStep: t.DenoiseStep, DenoiseAgg: t.DenoiseAgg, Load: load},
		StepFractions:        f.StepFractions,
		ImprovementThreshold: f.ImprovementThreshold,
		Video:                video,
	}, true
}

// ExpectedLoadMs is the scenario's expected_load_ms and the tolerance perf.load uses
// (Tolerances.LoadTolerance: a scenario's timing_tolerance leaves it); NaN when absent.
func (f *File) ExpectedLoadMs(id string, t Tolerances) (ms, tol float64) {
	s := f.Scenarios[id]
	if s == nil {
		return math.NaN(), t.LoadTolerance()
	}
	return orNaN(s.ExpectedLoadMs), t.LoadTolerance()
}

// Memory returns the memory baselines of scenario id under tolerances t; values the file
// lacks are NaN (an unknown scenario has none).
func (f *File) Memory(id string, t Tolerances) checks.MemoryBaseline {
	s := f.Scenarios[id]
	if s == nil {
		s = &Scenario{}
	}
	return checks.MemoryBaseline{
		LoadPeakMiB:         orNaN(s.LoadPeakVRAMMiB),
		RuntimePeakMiB:      orNaN(s.RuntimePeakVRAMMiB),
		LoadAllocatedMiB:    orNaN(s.LoadPeakAllocatedMiB),
		RuntimeAllocatedMiB: orNaN(s.RuntimePeakAllocatedMiB),
		LoadHostAnonMiB:     orNaN(s.LoadPeakHostAnonMiB),
		RuntimeHostAnonMiB:  orNaN(s.RuntimePeakHostAnonMiB),
		WarmupPeakMiB:       orNaN(s.WarmupPeakVRAMMiB),
		LoadTol:             t.LoadPeakVRAM,
		RuntimeTol:          t.RuntimePeakVRAM,
	}
}

// Marshal writes the file in SGLang's format (json.dump with indent=4, keys in file order).
// A file read and not changed comes back byte for byte.
func (f *File) Marshal() []byte { return f.doc.marshal() }

func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}
