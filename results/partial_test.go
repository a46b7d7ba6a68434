package results

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadOutKeepsEveryMeasuredRequest: whatever the run left in --out (a final results.json,
// the one written at its start and never replaced, or no results.json at all), readOut
// returns every request that requests.jsonl holds, with its verdict (the last line of a
// request wins), and marks a result it completed or rebuilt incomplete, with an error (so
// that the judge never calls it a pass: TestReadAllJudgedNeverPassesARebuiltRun).
func TestReadOutKeepsEveryMeasuredRequest(t *testing.T) {
	failed := sampleRequest("c", 2, 3)
	failed.Status = Fail
	failed.Checks = []Check{{Name: OutputValid, Status: Fail, Detail: "not decodable"}}
	revised := sampleRequest("c", 1, 3)
	revised.Revised = true
	lines := []RequestResult{sampleRequest("c", 1, 3), failed, revised}
	early := func() *Result {
		res := &Result{Suite: "s", Partition: Partition{Index: 1, Total: 2}, PlanHash: "h",
			Planned: [][]string{{"x"}, {"c"}}, Incomplete: "written at the start of the run",
			Errors: []string{"the run did not finish"}}
		cr := CaseResult{ID: "c", Server: "ref", Modality: "image"}
		for i := 1; i <= 3; i++ {
			cr.Requests = append(cr.Requests, noResult("c", i, 3))
		}
		res.Cases = []CaseResult{cr}
		return res
	}
	for _, tc := range []struct {
		name       string
		results    *Result // nil: no results.json
		wantStatus []Status
		incomplete bool
		partition  Partition
	}{
		{"results.json from the start of the run", early(), []Status{Pass, Fail, Cancelled}, true,
			Partition{Index: 1, Total: 2}},
		{"no results.json", nil, []Status{Pass, Fail, Cancelled}, true, Partition{Index: 0, Total: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, dir := newTestWriter(t)
			for _, rr := range lines {
				if err := rec.Request(rr); err != nil {
					t.Fatal(err)
				}
			}
			if tc.results != nil {
				if err := rec.Results(settled(tc.results, Error)); err != nil {
					t.Fatal(err)
				}
			}
			res, warnings, err := readOut(t.Context(), dir)
			if err != nil {
				t.Fatal(err)
			}
			var got []Status
			for _, rr := range res.Cases[0].Requests {
				got = append(got, rr.Status)
				if rr.Revised {
					t.Errorf("request %d keeps the revised mark of its line", rr.Index)
				}
			}
			if diff := cmp.Diff(tc.wantStatus, got); diff != "" {
				t.Errorf("request statuses (-want +got):\n%s", diff)
			}
			if (res.Incomplete != "") != tc.incomplete || len(res.Errors) == 0 || res.Partition != tc.partition {
				t.Errorf("run: incomplete %q, errors %q, partition %+v", res.Incomplete, res.Errors, res.Partition)
			}
			if w := fmt.Sprint(warnings); !strings.Contains(w, "rebuilt with the 3 request lines") {
				t.Errorf("warnings %s: want what was rebuilt", w)
			}
			if tc.results == nil {
				return
			}
			// Read of the file itself completes it the same way.
			direct, err := ReadContext(t.Context(), filepath.Join(dir, ResultsFile))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(res, direct); diff != "" {
				t.Errorf("Read differs from readOut (-readOut +Read):\n%s", diff)
			}
		})
	}
}

// TestReadOutTakesAFinalResultsAsItIs: a results.json that the run finished is read as it
// is, whatever requests.jsonl holds.
func TestReadOutTakesAFinalResultsAsItIs(t *testing.T) {
	rec, dir := newTestWriter(t)
	final := &Result{Suite: "s", Partition: Partition{Index: 0, Total: 1},
		Cases: []CaseResult{{ID: "c", Requests: []RequestResult{sampleRequest("c", 1, 1)}}}}
	if err := rec.Results(settled(final, Pass)); err != nil {
		t.Fatal(err)
	}
	if err := rec.Request(sampleRequest("other", 1, 1)); err != nil {
		t.Fatal(err)
	}
	res, warnings, err := readOut(t.Context(), dir)
	if err != nil || len(warnings) > 0 || len(res.Cases) != 1 || res.Status != Pass {
		t.Fatalf("readOut = %+v, %v, %v", res, warnings, err)
	}
	if err := os.Remove(filepath.Join(dir, ResultsFile)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, RequestsFile)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := readOut(t.Context(), dir); err == nil || !strings.Contains(err.Error(), "neither results.json nor requests.jsonl") {
		t.Errorf("an empty folder: %v", err)
	}
}

// TestCompleteRefusesALineThatClaimsHugeCounts: a hostile requests.jsonl line claiming a
// billion requests for a case results.json lacks makes no billion placeholders; a line that
// does not fit its case's count is skipped; both are warnings.
func TestCompleteRefusesALineThatClaimsHugeCounts(t *testing.T) {
	res := &Result{Cases: []CaseResult{{ID: "c", Requests: []RequestResult{noResult("c", 1, 1)}}}}
	warnings := complete(res, []requestLine{{RequestResult: sampleRequest("bomb", 1, 1_000_000_000)}, {RequestResult: sampleRequest("c", 2, 2)}})
	if len(res.Cases) != 1 || len(res.Cases[0].Requests) != 1 || len(warnings) != 2 {
		t.Fatalf("cases %d, requests %d, warnings %v", len(res.Cases), len(res.Cases[0].Requests), warnings)
	}
	if w := fmt.Sprint(warnings); !strings.Contains(w, "more than the 100000 a rebuilt case may have") ||
		!strings.Contains(w, "does not fit the case's 1 requests") {
		t.Errorf("warnings %s", w)
	}
}

// TestRebuiltResultKeepsItsPlacement: a results.json that is lost is
// rebuilt into the lane, partition and plan its request lines record; lines that record none
// (an older diffusion-check) place nothing, and say so, instead of a guessed lane or
// partition. fillRebuiltHeads then gives the placed one its plan's head, and the unplaced one
// only the suite.
func TestRebuiltResultKeepsItsPlacement(t *testing.T) {
	read := func(place *Placement) (*Result, []error) {
		rec, dir := newTestWriter(t)
		if place != nil {
			rec.Place(*place)
		}
		if err := rec.Request(sampleRequest("c", 1, 1)); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(dir, ResultsFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		res, warnings, err := readOut(t.Context(), dir)
		if err != nil {
			t.Fatal(err)
		}
		return res, warnings
	}
	placed, _ := read(&Placement{Partition: Partition{Index: 3, Total: 5}, PlanHash: "h1", Lanes: map[string]string{"c": "extra"}})
	if placed.Partition != (Partition{Index: 3, Total: 5}) || placed.PlanHash != "h1" || placed.Cases[0].Lane != "extra" {
		t.Errorf("placed: partition %+v, plan %q, lane %q; want 3/5, h1, extra", placed.Partition, placed.PlanHash, placed.Cases[0].Lane)
	}
	unplaced, warnings := read(nil)
	if unplaced.PlanHash != "" || unplaced.Cases[0].Lane != "" || !strings.Contains(fmt.Sprint(warnings), "record no lane") {
		t.Errorf("unplaced: plan %q, lane %q, warnings %v; want no plan, no lane, and a warning", unplaced.PlanHash, unplaced.Cases[0].Lane, warnings)
	}
	planned := [][]string{{"a"}, {"b"}, {"d"}, {"c"}, {"e"}}
	other := &Result{Suite: "s", Commit: "abc", PlanHash: "h1", Planned: planned, Partition: Partition{Index: 0, Total: 5}}
	fillRebuiltHeads([]Input{{File: "p0", Result: other}, {File: "p3", Result: placed}, {File: "px", Result: unplaced}})
	if placed.Suite != "s" || placed.Commit != "abc" || len(placed.Planned) != 5 || placed.Partition.Index != 3 {
		t.Errorf("placed after fillRebuiltHeads: %+v", placed)
	}
	if unplaced.Suite != "s" || unplaced.Planned != nil || unplaced.PlanHash != "" {
		t.Errorf("unplaced after fillRebuiltHeads: suite %q, planned %v, plan %q; want the suite only", unplaced.Suite, unplaced.Planned, unplaced.PlanHash)
	}
}
