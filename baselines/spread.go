package baselines

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
)

// SpreadSchema tags a spread sidecar file.
const SpreadSchema = "diffusion-check/spread/v1"

// SpreadSuffix ends the name of a spread sidecar: perf_baselines/h200.json has its spread in
// perf_baselines/h200.spread.json. SGLang's file stays exactly as SGLang reads it; the
// spread, which SGLang has no place for, lives beside it.
const SpreadSuffix = ".spread.json"

// SpreadFile is a spread sidecar: for every scenario (case id) and metric, the spread of
// the values the baseline's requests measured (results.Spread). A metric is named as the
// check that compares it with the baseline ("perf.e2e", "perf.stage.DenoisingStage",
// "perf.step.3", "perf.denoise_avg"), memory with its source after a slash
// ("memory.runtime_peak/server_reserved").
type SpreadFile struct {
	Schema    string                               `json:"schema"`
	GPU       string                               `json:"gpu,omitempty"`
	Scenarios map[string]map[string]results.Spread `json:"scenarios"`
	// Path is the file it was read from; empty for one made in memory.
	Path string `json:"-"`
}

// SpreadPath is the sidecar of a baseline file: h200.json → h200.spread.json.
func SpreadPath(baselinePath string) string {
	return strings.TrimSuffix(baselinePath, ".json") + SpreadSuffix
}

// IsSpreadPath reports whether path names a spread sidecar rather than a baseline file.
func IsSpreadPath(path string) bool { return strings.HasSuffix(path, SpreadSuffix) }

// SpreadKey is the metric name of a check in a spread file: its name, and for a check with
// a source, "/" and the source.
func SpreadKey(name, source string) string {
	if source == "" {
		return name
	}
	return name + "/" + source
}

// LoadSpread reads a spread sidecar. A missing file is an error that wraps os.ErrNotExist
// (a baseline without spread data); a malformed one is an error naming the file and what is
// wrong.
func LoadSpread(path string) (*SpreadFile, error) {
	data, err := readInput(path)
	if err != nil {
		return nil, fmt.Errorf("read spread file: %w", err)
	}
	return parseSpread(path, data)
}

// parseSpread decodes a spread sidecar strictly (unknown fields are errors) and checks every
// spread: n ≥ 1, finite numbers, min ≤ median ≤ max, MAD ≥ 0.
func parseSpread(path string, data []byte) (*SpreadFile, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f SpreadFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: not a spread file: %w", path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: not a spread file: data after the JSON object", path)
	}
	if f.Schema != SpreadSchema {
		return nil, fmt.Errorf("%s: schema %q, want %q", path, f.Schema, SpreadSchema)
	}
	var errs []error
	for _, id := range slices.Sorted(maps.Keys(f.Scenarios)) {
		ms := f.Scenarios[id]
		for _, m := range slices.Sorted(maps.Keys(ms)) {
			if why := badSpread(ms[m]); why != "" {
				errs = append(errs, fmt.Errorf("%s: scenarios.%s.%s: %s", path, id, m, why))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if f.Scenarios == nil {
		f.Scenarios = map[string]map[string]results.Spread{}
	}
	f.Path = path
	return &f, nil
}

func badSpread(s results.Spread) string {
	for _, v := range []float64{s.Min, s.Median, s.Max, s.MAD} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "not a finite number"
		}
	}
	switch {
	case s.N < 1:
		return fmt.Sprintf("n must be ≥ 1, got %d", s.N)
	case s.Min > s.Median || s.Median > s.Max:
		return fmt.Sprintf("want min ≤ median ≤ max, got %g, %g, %g", s.Min, s.Median, s.Max)
	case s.MAD < 0:
		return fmt.Sprintf("mad must not be negative, got %g", s.MAD)
	}
	return ""
}

// For returns the spread of one check of a scenario, nil when the file has none.
func (f *SpreadFile) For(scenario, name, source string) *results.Spread {
	if f == nil {
		return nil
	}
	s, ok := f.Scenarios[scenario][SpreadKey(name, source)]
	if !ok {
		return nil
	}
	return &s
}

// Marshal writes the file as indented JSON with sorted keys, ending in a newline, so that a
// regeneration's diff shows only what changed.
func (f *SpreadFile) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("write spread file: %w", err)
	}
	return append(b, '\n'), nil
}

// RegenerateSpread is the spread sidecar after a regeneration from results: every scenario
// the results measured gets the spread of this regeneration's requests (the same requests
// whose worst value Regenerate writes: every request of every partition with a perf record,
// for memory every request); the scenarios they did not measure keep what base (nil: none)
// had. It returns nil when there is nothing to write.
func RegenerateSpread(base *SpreadFile, gpu string, runs []*results.Result) *SpreadFile {
	out := &SpreadFile{Schema: SpreadSchema, GPU: gpu, Scenarios: map[string]map[string]results.Spread{}}
	if base != nil {
		maps.Copy(out.Scenarios, base.Scenarios)
		if gpu == "" {
			out.GPU = base.GPU
		}
	}
	for id, values := range spreadValues(runs) {
		ms := map[string]results.Spread{}
		for m, vs := range values {
			if s, ok := checks.SpreadOf(vs); ok {
				ms[m] = results.Spread{N: s.N, Min: round4(s.Min), Median: round4(s.Median), Max: round4(s.Max), MAD: round4(s.MAD)}
			}
		}
		if len(ms) > 0 {
			out.Scenarios[id] = ms
		}
	}
	if len(out.Scenarios) == 0 {
		return nil
	}
	return out
}

// round4 rounds to 4 decimals (a ten-thousandth of a ms or MiB, far below any noise), so that
// the file reads and diffs without float noise such as 0.5380000000000109.
func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }

// spreadValues gathers, per case and metric, the value of every request: the values the
// perf and memory checks compare with the baseline.
func spreadValues(runs []*results.Result) map[string]map[string][]float64 {
	out := map[string]map[string][]float64{}
	for _, r := range runs {
		for _, cr := range r.Cases {
			vs := out[cr.ID]
			if vs == nil {
				vs = map[string][]float64{}
			}
			add := func(metric string, v float64) {
				if v > 0 && !math.IsInf(v, 0) {
					vs[metric] = append(vs[metric], v)
				}
			}
			for _, rr := range cr.Requests {
				for src, v := range rr.PeakVRAMMiB {
					if !strings.Contains(src, ":") {
						add(SpreadKey(checks.MemoryRuntimePeak, src), v)
					}
				}
				if !hasPerf(rr) {
					continue
				}
				if len(rr.RealtimeChunks) > 0 {
					add(checks.PerfE2E, checks.SessionE2E(rr.RealtimeChunks)) // what a realtime perf.e2e judges
					continue
				}
				add(checks.PerfE2E, rr.ServerTotalMs)
				for _, st := range rr.Stages {
					add(checks.PerfStagePrefix+st.Name, st.Ms)
				}
				for i, v := range rr.StepsMs {
					add(checks.PerfStepPrefix+strconv.Itoa(i), v)
				}
				if len(rr.StepsMs) > 0 {
					add(checks.PerfDenoiseAvg, checks.StepMean(rr.StepsMs))
					add(checks.PerfDenoiseMedian, checks.StepMedian(rr.StepsMs))
				}
			}
			if len(vs) > 0 {
				out[cr.ID] = vs
			}
		}
	}
	return out
}
