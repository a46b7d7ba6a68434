package baselines

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/diffusion-check/diffusion-check/internal/strictdecode"
	"github.com/diffusion-check/diffusion-check/internal/words"
)

// vendorFiles are the files whose scenarios SGLang merges into every platform's perf
// baseline, in its order: Ascend NPU, then Moore Threads MUSA. They sit beside the
// perf_baselines folder (testcase_configs.py BASELINE_CONFIG =
// BaselineConfig.load(platform).update(ascend/…).update(musa/…); pandalee99/sglang @ cce0a1244,
// 2026-08-23, l.825–916, and web4hub/Sgl @ 4e66c7cc, on or after 2026-09-23).
var vendorFiles = []string{
	filepath.Join("ascend", "perf_baselines_npu.json"),
	filepath.Join("musa", "perf_baselines_musa.json"),
}

// Merged is a vendor file merged into a platform's baseline, and the scenarios it gave.
type Merged struct {
	Path      string
	Scenarios []string
	// Replaced are the scenarios of the platform file (or an earlier vendor file) that it
	// replaced whole, as BaselineConfig.update does.
	Replaced []string
}

// MergeVendors returns f with the scenarios of SGLang's vendor files (vendorFiles, looked for
// beside the folder that holds f) merged in as BaselineConfig.update merges them: each
// scenario replaces the scenario of that id whole; tolerances, sampling and runner pools stay
// f's. It runs after ForRunner, as SGLang applies runner_overrides before the merges. A vendor
// file that is absent is skipped (a baseline folder outside SGLang's tree has none); one that
// cannot be read or decoded is an error naming it. f is not changed.
func (f *File) MergeVendors() (*File, error) {
	root := filepath.Dir(filepath.Dir(f.Path))
	g := *f
	cloned := false
	var errs []error
	for _, rel := range vendorFiles {
		path := filepath.Join(root, rel)
		data, err := readInput(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("read the baselines SGLang merges into every platform's: %w", err))
			continue
		}
		scenarios, order, err := parseVendor(path, data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !cloned {
			g.Scenarios, g.Merged, cloned = maps.Clone(f.Scenarios), slices.Clone(f.Merged), true
		}
		m := Merged{Path: path, Scenarios: order}
		for _, id := range order {
			if _, ok := g.Scenarios[id]; ok {
				m.Replaced = append(m.Replaced, id)
			}
			g.Scenarios[id] = scenarios[id]
		}
		g.Merged = append(g.Merged, m)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &g, nil
}

// String says what the merge did: "ascend/perf_baselines_npu.json (12 scenarios), as SGLang
// merges it into every platform's file".
func (m Merged) String() string {
	s := fmt.Sprintf("%s (%s), as SGLang merges it into every platform's file", m.Path, words.Plural(len(m.Scenarios), "scenario"))
	if len(m.Replaced) > 0 {
		s += fmt.Sprintf("; it replaces %s whole", strings.Join(m.Replaced, ", "))
	}
	return s
}

// parseVendor decodes a vendor file: its "scenarios" (the only key BaselineConfig.update
// reads), each as a scenario of a baseline file, in file order.
func parseVendor(path string, data []byte) (map[string]*Scenario, []string, error) {
	doc, err := parseJSON(path, data)
	if err != nil {
		return nil, nil, err
	}
	d := &decoder{strictdecode.Problems{File: path}}
	out := map[string]*Scenario{}
	var order []string
	if d.object(doc, "(top level)") {
		sc := doc.get("scenarios")
		switch {
		case sc == nil:
			d.Addf(doc.line, "scenarios", "missing; SGLang's BaselineConfig.update reads the file's \"scenarios\"")
		case d.object(sc, "scenarios"):
			for i, id := range sc.keys {
				s := d.scenario("scenarios."+id, id, sc.vals[i])
				s.From = path
				out[id] = s
				order = append(order, id)
			}
		}
	}
	if err := d.Err(); err != nil {
		return nil, nil, err
	}
	return out, order, nil
}
