package fault

import (
	"flag"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var _ flag.Value = (*Set)(nil)

func TestSet(t *testing.T) {
	for _, tc := range []struct {
		specs []string
		want  Set
	}{
		{nil, Set{}},
		{[]string{"drift-after=3"}, Set{DriftAfter: 3}},
		{[]string{"video-drift-after=1", "audio-drift-after=2"}, Set{VideoDriftAfter: 1, AudioDriftAfter: 2}},
		{[]string{" slow-after=2:1.5 "}, Set{SlowAfter: 2, SlowFactor: 1.5}},
		{[]string{"slow-at=3:4"}, Set{SlowAt: 3, SlowAtFactor: 4}},
		{[]string{"drift-at=2", "offset=12"}, Set{DriftAt: 2, Offset: 12}},
		{[]string{"slow-chunk=3:20", "close-chunk=2"}, Set{SlowChunk: 3, SlowChunkFactor: 20, CloseChunk: 2}},
		{[]string{"slow-after=1:2", "slow-at=2:3"}, Set{SlowAfter: 1, SlowFactor: 2, SlowAt: 2, SlowAtFactor: 3}},
		{[]string{"mem-grow=0.5"}, Set{MemGrowMiB: 0.5}},
		{[]string{"crash-at=4", "hang-at=5", "corrupt-at=6", "empty-at=7"}, Set{CrashAt: 4, HangAt: 5, CorruptAt: 6, EmptyAt: 7}},
		{[]string{"no-perf-record", "fail-startup"}, Set{NoPerfRecord: true, FailStartup: true}},
	} {
		var got Set
		for _, s := range tc.specs {
			if err := got.Set(s); err != nil {
				t.Fatalf("Set(%q): %v", s, err)
			}
		}
		if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreUnexported(Set{})); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tc.specs, diff)
		}
		trimmed := make([]string, len(tc.specs))
		for i, s := range tc.specs {
			trimmed[i] = strings.TrimSpace(s)
		}
		if diff := cmp.Diff(trimmed, got.Specs(), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%q: Specs (-want +got):\n%s", tc.specs, diff)
		}
		if s := got.String(); s != strings.Join(trimmed, ",") {
			t.Errorf("%q: String() = %q", tc.specs, s)
		}
	}
}

func TestSetErrors(t *testing.T) {
	for spec, want := range map[string]string{
		"explode":             `unknown fault "explode" (known: drift-after=K,`,
		"crash-at":            `fault "crash-at": want crash-at=K with a request number K ≥ 1`,
		"crash-at=0":          `fault "crash-at=0": want crash-at=K`,
		"hang-at=x":           `fault "hang-at=x": want hang-at=K`,
		"no-perf-record=1":    `fault "no-perf-record=1": no-perf-record takes no value`,
		"slow-after=2":        `fault "slow-after=2": want slow-after=K:FACTOR with K ≥ 1 and FACTOR > 0`,
		"slow-after=2:0":      `want slow-after=K:FACTOR`,
		"slow-after=0:2":      `want slow-after=K:FACTOR`,
		"slow-at=2":           `fault "slow-at=2": want slow-at=K:FACTOR with K ≥ 1 and FACTOR > 0`,
		"slow-chunk=0:3":      `want slow-chunk=K:FACTOR`,
		"close-chunk=0":       `want close-chunk=K`,
		"slow-at=0:3":         `want slow-at=K:FACTOR`,
		"slow-at=1:-3":        `want slow-at=K:FACTOR`,
		"mem-grow=-1":         `fault "mem-grow=-1": want mem-grow=MiB with MiB > 0`,
		"drift-at=0":          `fault "drift-at=0": want drift-at=K with a request number K ≥ 1`,
		"offset":              `fault "offset": want offset=LEVELS with 1 ≤ LEVELS ≤ 255`,
		"offset=0":            `want offset=LEVELS`,
		"offset=256":          `want offset=LEVELS`,
		"offset=1.5":          `want offset=LEVELS`,
		"mem-grow=NaN":        `want mem-grow=MiB with MiB > 0`,
		"fail-startup=please": `fail-startup takes no value`,
		"mem-spike-at=2":      `fault "mem-spike-at=2": want mem-spike-at=K:MiB with K ≥ 1 and 0 < MiB ≤ 4096`,
		"mem-spike-at=2:5000": `want mem-spike-at=K:MiB`,
		"mem-spike-at=2:+Inf": `want mem-spike-at=K:MiB`,
		"mem-spike-at=0:64":   `want mem-spike-at=K:MiB`,
	} {
		var f Set
		err := f.Set(spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Set(%q) = %v, want an error containing %q", spec, err, want)
		}
		if len(f.Specs()) != 0 || !cmp.Equal(f, Set{}, cmpopts.IgnoreUnexported(Set{})) {
			t.Errorf("Set(%q) failed but kept %+v", spec, f)
		}
	}
	var nilSet *Set
	if s := nilSet.String(); s != "" {
		t.Errorf("nil String() = %q", s)
	}
}

// TestKnownMatchesSet proves that every spec Known lists (the --fault help and the
// unknown-fault error) is one Set accepts, with sample values for K, FACTOR, MiB and LEVELS.
func TestKnownMatchesSet(t *testing.T) {
	for _, k := range Known() {
		spec := strings.NewReplacer("=K:FACTOR", "=2:1.5", "=K:MiB", "=2:64", "=K", "=2", "=MiB", "=1.5", "=LEVELS", "=12").Replace(k)
		var f Set
		if err := f.Set(spec); err != nil {
			t.Errorf("Known lists %s, but Set(%q): %v", k, spec, err)
		}
	}
}
