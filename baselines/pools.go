package baselines

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// RunnerEnv is the variable that names the runner a run is on: GitHub Actions sets it on
// every runner, and SGLang's harness matches it against runner_overrides.
const RunnerEnv = "RUNNER_NAME"

// Pool is one entry of a baseline file's runner_overrides: the scenario values measured on
// one pool of runners, keyed by a prefix of their RUNNER_NAME (SGLang's b200.json keeps the
// DeepInfra pool "b200-di*" and the Cirrascale pools apart, each with its own E2E
// references). Overrides maps a scenario id to the keys it overrides (expected_e2e_ms, …);
// every other value of the scenario, the tolerances and the sampling stay the file's.
//
// The file's shape is {"runner_overrides": {"<prefix>": {"<scenario>": {"<key>": number}}}}
// (reading: SGLang's newest b200.json could not be read, only the tests that read it,
// test_default_runner_baseline and test_runner_override_preserves_other_metrics; see
// docs/sglang-compat.md).
type Pool struct {
	Prefix    string
	Overrides map[string]map[string]float64
}

// PoolOf returns the pool of a runner name: the entry whose prefix begins the name, the
// longest such prefix when several do (reading: SGLang's tests never have two match), or
// false (the default pool) when none does, or the name is empty.
func (f *File) PoolOf(runner string) (Pool, bool) {
	best := -1
	for i, p := range f.Pools {
		if runner != "" && strings.HasPrefix(runner, p.Prefix) && (best < 0 || len(p.Prefix) > len(f.Pools[best].Prefix)) {
			best = i
		}
	}
	if best < 0 {
		return Pool{}, false
	}
	return f.Pools[best], true
}

// ForRunner returns the file as it applies on runner: a copy whose scenarios carry the
// runner's pool overrides and whose Pool names it, or f itself for a runner of the default
// pool. f is not changed; Marshal and regeneration still see the file as it was read.
func (f *File) ForRunner(runner string) *File {
	p, ok := f.PoolOf(runner)
	if !ok {
		return f
	}
	g := *f
	g.Pool = p.Prefix
	g.Scenarios = maps.Clone(f.Scenarios)
	for id, keys := range p.Overrides {
		s := *f.Scenarios[id] // the decoder made sure it exists
		fields := s.scalars()
		for k, v := range keys {
			*fields[k] = &v
		}
		g.Scenarios[id] = &s
	}
	return &g
}

// pools decodes runner_overrides. A prefix that is empty, a scenario the file does not
// have under "scenarios", or a key that is not one of a scenario's single numbers is an
// error naming its line.
func (d *decoder) pools(doc *node, scenarios map[string]*Scenario) []Pool {
	ro := doc.get("runner_overrides")
	if ro == nil || !d.object(ro, "runner_overrides") {
		return nil
	}
	var out []Pool
	for i, prefix := range ro.keys {
		kp := "runner_overrides." + prefix
		if strings.TrimSpace(prefix) == "" {
			d.Addf(ro.lines[i], kp, "want a RUNNER_NAME prefix such as \"b200-di\", got an empty key")
			continue
		}
		pn := ro.vals[i]
		if !d.object(pn, kp) {
			continue
		}
		p := Pool{Prefix: prefix, Overrides: map[string]map[string]float64{}}
		for j, id := range pn.keys {
			skp := kp + "." + id
			if s := scenarios[id]; s == nil || !s.InScenarios {
				d.Addf(pn.lines[j], skp, "scenario %q is not under \"scenarios\"", id)
				continue
			}
			sn := pn.vals[j]
			if !d.object(sn, skp) {
				continue
			}
			known := (&Scenario{}).scalars()
			keys := map[string]float64{}
			for k, key := range sn.keys {
				if _, ok := known[key]; !ok {
					d.Addf(sn.lines[k], skp+"."+key, "not a key a pool can override (known: %s)", strings.Join(slices.Sorted(maps.Keys(known)), ", "))
					continue
				}
				if v, ok := d.number(sn.vals[k], skp+"."+key); ok {
					keys[key] = v
				}
			}
			p.Overrides[id] = keys
		}
		out = append(out, p)
	}
	return out
}

// PoolLabel names the pool a file applies in reports: "default pool" or "pool b200-di".
func (f *File) PoolLabel() string {
	if f.Pool == "" {
		return "default pool"
	}
	return fmt.Sprintf("pool %s", f.Pool)
}
