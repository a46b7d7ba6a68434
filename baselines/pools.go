package baselines

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/diffusion-check/diffusion-check/internal/strictdecode"
)

// runnerEnv is the variable that names the runner a run is on: GitHub Actions sets it on
// every runner, and SGLang's harness matches it against runner_overrides.
const runnerEnv = "RUNNER_NAME"

// Pool is one entry of a baseline file's runner_overrides: the scenario values measured on
// one pool of runners, keyed by a prefix of their RUNNER_NAME (SGLang's b200.json keeps the
// DeepInfra pool "b200-di*" and the Cirrascale pools apart, each with its own E2E
// references). Every other value of a scenario, the tolerances and the sampling stay the
// file's.
//
// The file's shape is {"runner_overrides": {"<prefix>": {"<scenario>": {"<key>": value}}}},
// applied as SGLang's BaselineConfig.load applies it (testcase_configs.py, web4hub/Sgl @
// 4e66c7cc, on or after 2026-09-23): the entry's keys replace the scenario's keys of the raw
// document (a "stages_ms" replaces the whole map), before the scenarios are parsed.
type Pool struct {
	Prefix string
	// Overrides are the pool's scenario entries, in file order.
	Overrides []Override
	// Ignored names the keys of the pool's entries that no scenario has, as
	// "<scenario>.<key>": SGLang's ScenarioConfig.from_dict never reads them, so they change
	// nothing; a run of the pool warns about them.
	Ignored []string
	// Err holds every problem of the pool's entries (a scenario the file lacks, a value that
	// is not a number), each naming its line. Only the pool's runs fail with it: SGLang's
	// loader reads no entry but the one its runner matches.
	Err error
}

// Override is one scenario entry of a pool: the keys it sets (in file order) and their values.
type Override struct {
	Scenario string
	Keys     []string
	Values   *Scenario
}

// PoolOf returns the pool of a runner name: the first entry, in file order, whose prefix
// begins the name, or false (the default pool) when none does. An empty prefix matches every
// runner, a run without RUNNER_NAME too, as Python's "".startswith("") does.
func (f *File) PoolOf(runner string) (Pool, bool) {
	for _, p := range f.Pools {
		if strings.HasPrefix(runner, p.Prefix) {
			return p, true
		}
	}
	return Pool{}, false
}

// ForRunner returns the file as it applies on runner: a copy whose scenarios carry the
// runner's pool overrides and whose Pool names it, or f itself for a runner of the default
// pool. f is not changed; Marshal and regeneration still see the file as it was read. A pool
// whose entries could not be applied is an error naming the file, the pool and the runner;
// the keys it ignores are the copy's Warnings.
func (f *File) ForRunner(runner string) (*File, error) {
	p, ok := f.PoolOf(runner)
	if !ok {
		return f, nil
	}
	if p.Err != nil {
		return nil, fmt.Errorf("runner_overrides pool %q (RUNNER_NAME %q): %w", p.Prefix, runner, p.Err)
	}
	g := *f
	g.Pool, g.InPool = p.Prefix, true
	g.Scenarios = maps.Clone(f.Scenarios)
	for _, o := range p.Overrides {
		s := *g.Scenarios[o.Scenario] // the decoder made sure it exists
		for _, k := range o.Keys {
			s.setKey(k, o.Values)
		}
		g.Scenarios[o.Scenario] = &s
	}
	g.Warnings = slices.Clone(f.Warnings)
	if len(p.Ignored) > 0 {
		g.Warnings = append(g.Warnings, fmt.Sprintf("%s: runner_overrides pool %q sets keys no scenario has, which SGLang ignores too: %s",
			f.Path, p.Prefix, strings.Join(p.Ignored, ", ")))
	}
	return &g, nil
}

// pools decodes runner_overrides. Only a runner_overrides that is not an object fails the
// file (SGLang's loader fails on every runner then); a problem inside one pool's entry fails
// only that pool's runs (Pool.Err).
func (d *decoder) pools(doc *node, scenarios map[string]*Scenario) []Pool {
	ro := doc.get("runner_overrides")
	if ro == nil || !d.object(ro, "runner_overrides") {
		return nil
	}
	var out []Pool
	for i, prefix := range ro.keys {
		kp := "runner_overrides." + strconv.Quote(prefix)
		pd := &decoder{strictdecode.Problems{File: d.File}}
		p := Pool{Prefix: prefix}
		if pn := ro.vals[i]; pd.object(pn, kp) {
			for j, id := range pn.keys {
				skp := kp + "." + id
				if s := scenarios[id]; s == nil || !s.InScenarios {
					pd.Addf(pn.lines[j], skp, "scenario %q is not under \"scenarios\"", id)
					continue
				}
				sn := pn.vals[j]
				if !pd.object(sn, skp) {
					continue
				}
				o := Override{Scenario: id, Values: pd.scenario(skp, id, sn)}
				for _, key := range sn.keys {
					if isScenarioKey(key) {
						o.Keys = append(o.Keys, key)
					} else {
						p.Ignored = append(p.Ignored, id+"."+key)
					}
				}
				p.Overrides = append(p.Overrides, o)
			}
		}
		p.Err = pd.Err()
		out = append(out, p)
	}
	return out
}

// PoolLabel names the pool a file applies in reports: "default pool", "pool b200-di", or
// `pool "" (every runner)` for an empty prefix.
func (f *File) PoolLabel() string {
	switch {
	case !f.InPool:
		return "default pool"
	case f.Pool == "":
		return `pool "" (every runner)`
	}
	return "pool " + f.Pool
}
