package history

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func storeRun(i int, kind Kind) *Run {
	r := &Run{Schema: storeSchema, Suite: "s", GPU: "h200", Commit: fmt.Sprintf("%040x", i), Kind: kind, RunID: fmt.Sprintf("%d-1", i),
		Date: t0.Add(time.Duration(i) * time.Hour), Status: "pass",
		Cases: []Case{{ID: "a", Metrics: []Metric{{Name: "perf.e2e", Unit: "ms", Value: float64(100 + i), Median: 100, N: 3}}}}}
	if kind == KindPR {
		r.PR = 100 + i
	}
	return r
}

func TestWriteIsExclusive(t *testing.T) {
	dir := t.TempDir()
	r := storeRun(1, KindDefault)
	path, err := Write(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	r.Cases[0].Metrics[0].Value = 1
	if _, err := Write(dir, r); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("second write of the same run: err = %v, want file exists", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("the second write changed the first run's file")
	}
}

// TestConcurrentWritersNeverShareAFile: runs of one commit written at the same moment by
// different jobs get different files, all readable.
func TestConcurrentWritersNeverShareAFile(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Go(func() {
			r := storeRun(1, KindDefault)
			r.RunID = fmt.Sprintf("555-%d", i)
			_, errs[i] = Write(dir, r)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	runs, warnings, err := Load(t.Context(), dir)
	if err != nil || len(warnings) > 0 || len(runs) != 20 {
		t.Fatalf("load: %d runs, warnings %v, err %v", len(runs), warnings, err)
	}
}

// TestLoadLeavesOutHostileFilesWithAWarning: a store file from a pull request is untrusted:
// too large, not JSON, an unknown field, bad numbers or a file in another series' folder is
// left out and named; the good files are still read.
func TestLoadLeavesOutHostileFilesWithAWarning(t *testing.T) {
	dir := t.TempDir()
	good, err := Write(dir, storeRun(1, KindDefault))
	if err != nil {
		t.Fatal(err)
	}
	series := filepath.Dir(good)
	data, _ := os.ReadFile(good)
	other := filepath.Join(dir, "other--default--h100")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		filepath.Join(series, "big.json"):      `{"schema":"` + strings.Repeat("x", maxFileBytes) + `"}`,
		filepath.Join(series, "notjson.json"):  `{"schema":`,
		filepath.Join(series, "unknown.json"):  strings.Replace(string(data), `"suite"`, `"evil": 1, "suite"`, 1),
		filepath.Join(series, "negative.json"): strings.Replace(string(data), `"value": 101`, `"value": -5`, 1),
		filepath.Join(series, "huge.json"):     strings.Replace(string(data), `"value": 101`, `"value": 1e308`, 1),
		filepath.Join(other, "elsewhere.json"): string(data),
		filepath.Join(series, "trailing.json"): string(data) + "{}",
	} {
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runs, warnings, err := Load(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].RunID != "1-1" {
		t.Errorf("runs read: %d, want only the good one", len(runs))
	}
	var got []string
	for _, w := range warnings {
		got = append(got, filepath.Base(strings.SplitN(strings.TrimPrefix(w.Error(), "history file "), ":", 2)[0]))
	}
	want := []string{"elsewhere.json", "big.json", "huge.json", "negative.json", "notjson.json", "trailing.json", "unknown.json"} // by path
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files warned about (-want +got):\n%s\n%v", diff, warnings)
	}
}

func TestPruneKeepsTheNewestOfEachKind(t *testing.T) {
	dir := t.TempDir()
	for i := 1; i <= 6; i++ {
		for _, k := range []Kind{KindDefault, KindPR} {
			if _, err := Write(dir, storeRun(i, k)); err != nil {
				t.Fatal(err)
			}
		}
	}
	removed, err := Prune(t.Context(), dir, Keep{Default: 4, PR: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 2+4 {
		t.Errorf("removed %d files, want 6: %v", len(removed), removed)
	}
	runs, _, _ := Load(t.Context(), dir)
	var got []string
	for _, r := range runs {
		got = append(got, string(r.Kind)+" "+r.RunID)
	}
	want := []string{"default 3-1", "default 4-1", "default 5-1", "pr 5-1", "default 6-1", "pr 6-1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	if _, err := Prune(t.Context(), dir, Keep{Default: 0, PR: 1}); err == nil {
		t.Error("keeping 0 runs was accepted")
	}
}

func TestFileNamesSortByDateAndStaySafe(t *testing.T) {
	r := storeRun(1, KindPR)
	r.RunID = "../../etc/passwd"
	r.Suite = "../x y"
	name := r.FileName()
	if strings.Contains(name, "/") || strings.Contains(r.SeriesOf().Dir(), "/") || strings.HasPrefix(r.SeriesOf().Dir(), ".") {
		t.Errorf("unsafe names: %q in %q", name, r.SeriesOf().Dir())
	}
	if want := "20261102T090000Z-000000000000-pr-pr101-_.._etc_passwd.json"; name != want {
		t.Errorf("file name %q, want %q", name, want)
	}
	if a, b := storeRun(9, KindDefault).FileName(), storeRun(10, KindDefault).FileName(); a >= b {
		t.Errorf("%s sorts after %s", a, b)
	}
}

// FuzzReadRun: whatever a store file holds, reading it returns a valid run or an error, never
// a panic, and a run it accepts survives Write and reads back the same.
func FuzzReadRun(f *testing.F) {
	good, _ := json.MarshalIndent(storeRun(1, KindDefault), "", " ")
	f.Add(good)
	f.Add([]byte(`{"schema":"diffusion-check/history/v1","cases":[{"id":"a","metrics":[{"name":"x","value":1e309}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		series := filepath.Join(dir, storeRun(1, KindDefault).SeriesOf().Dir())
		if err := os.MkdirAll(series, 0o755); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(series, "x.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := readRun(t.Context(), path)
		if err != nil {
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("accepted an invalid run: %v", err)
		}
		out := t.TempDir()
		p, err := Write(out, r)
		if err != nil {
			t.Fatalf("an accepted run does not write back: %v", err)
		}
		back, err := readRun(t.Context(), p)
		if err != nil {
			t.Fatalf("a written run does not read back: %v", err)
		}
		if diff := cmp.Diff(r, back); diff != "" {
			t.Errorf("round trip (-read +written):\n%s", diff)
		}
	})
}

// A series folder (or a file) that is a link to a folder outside the store is neither read nor
// pruned: the files it names stay as they are, and Load says why it left it out.
func TestLinksOutOfTheStoreAreNotFollowed(t *testing.T) {
	store, outside := t.TempDir(), t.TempDir()
	var files []string
	for i := 1; i <= 3; i++ {
		p, err := Write(outside, storeRun(i, KindDefault))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	series := filepath.Base(filepath.Dir(files[0]))
	if err := os.Symlink(filepath.Join(outside, series), filepath.Join(store, series)); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(store, storeRun(9, KindPR)); err == nil || !strings.Contains(err.Error(), "a symbolic link, not followed") {
		t.Fatalf("a write into the linked series: %v", err)
	}
	other := storeRun(9, KindPR)
	other.GPU = "b200"
	good, err := Write(store, other)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(files[0], filepath.Join(filepath.Dir(good), "link.json")); err != nil {
		t.Fatal(err)
	}
	removed, err := Prune(t.Context(), store, Keep{Default: 1, PR: 1})
	if err != nil || len(removed) != 0 {
		t.Fatalf("prune removed %v (%v), want nothing", removed, err)
	}
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("a file outside the store is gone: %v", err)
		}
	}
	runs, warnings, err := Load(t.Context(), store)
	if err != nil || len(runs) != 1 {
		t.Fatalf("load: %d runs, %v, warnings %v", len(runs), err, warnings)
	}
	text := fmt.Sprint(warnings)
	if !strings.Contains(text, series+": a symbolic link, not followed") || !strings.Contains(text, "link.json: not a regular file") {
		t.Errorf("warnings %v", warnings)
	}
}
