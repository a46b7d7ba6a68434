package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func newTestWriter(t *testing.T) (*Writer, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "out")
	rec, err := NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rec.Close() })
	return rec, dir
}

func sampleRequest(caseID string, i, of int) RequestResult {
	return RequestResult{
		Case:      caseID,
		Index:     i,
		Of:        of,
		RequestID: fmt.Sprintf("%s-%d", caseID, i),
		Status:    Pass,
		StartedAt: time.Date(2025, 3, 1, 12, 0, i, 0, time.UTC),
		E2EMs:     70.5 + float64(i),
		// Deliberately not in alphabetical order: the pipeline order must survive.
		Stages: Stages{
			{Name: "TextEncodingStage", Ms: 3.1},
			{Name: "DenoisingStage", Ms: 20.4},
			{Name: "DecodingStage", Ms: 41},
		},
		StepsMs: []float64{2.1, 2, 2},
		Output:  &Output{Kind: "image", Format: "png", Bytes: 12595, Width: 256, Height: 256},
		Checks: []Check{
			{Name: ServerAlive, Status: Pass},
			{Name: "perf.e2e", Status: Pass, Value: ptr(70.5), Limit: ptr(100.0), Unit: "ms"},
		},
	}
}

func TestWriterConcurrentRequests(t *testing.T) {
	rec, dir := newTestWriter(t)
	const writers, each = 8, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := 1; i <= each; i++ {
				if err := rec.Request(sampleRequest(fmt.Sprintf("case%d", w), i, each)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}

	got, warnings, err := ReadRequests(t.Context(), filepath.Join(dir, RequestsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) > 0 {
		t.Errorf("warnings: %v", warnings)
	}
	if len(got) != writers*each {
		t.Fatalf("read %d requests, want %d", len(got), writers*each)
	}
	seen := map[string]int{}
	for _, rr := range got {
		seen[rr.RequestID]++
		if diff := cmp.Diff(sampleRequest(rr.Case, rr.Index, rr.Of), rr); diff != "" {
			t.Fatalf("request %s (-want +got):\n%s", rr.RequestID, diff)
		}
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("request %s read %d times", id, n)
		}
	}
}

func TestWriterRequestErrors(t *testing.T) {
	rec, _ := newTestWriter(t)
	if err := rec.Request(RequestResult{Index: 1, Of: 1}); err == nil {
		t.Error("Request without a case id: want an error")
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := rec.Request(sampleRequest("a", 1, 1)); err == nil {
		t.Error("Request after Close: want an error")
	}
}

func TestNewWriterStartsFresh(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, RequestsFile)
	if err := os.WriteFile(old, []byte(`{"case":"old","index":1,"of":1,"status":"pass","checks":[]}`+"\n{\"case\":\"ol"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec, err := NewWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if err := rec.Request(sampleRequest("new", 1, 1)); err != nil {
		t.Fatal(err)
	}
	got, warnings, err := ReadRequests(t.Context(), old)
	if err != nil || len(warnings) > 0 || len(got) != 1 || got[0].Case != "new" {
		t.Errorf("ReadRequests = %d requests %v, warnings %v, err %v; want only the new run's request", len(got), got, warnings, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, ArtifactsDir)); err != nil || !fi.IsDir() {
		t.Errorf("artifacts folder: %v", err)
	}
}

func TestReadRequestsTruncatedLastLine(t *testing.T) {
	rec, dir := newTestWriter(t)
	for i := 1; i <= 2; i++ {
		if err := rec.Request(sampleRequest("t2i", i, 3)); err != nil {
			t.Fatal(err)
		}
	}
	rec.Close()
	path := filepath.Join(dir, RequestsFile)
	// What a crash half-way through the third write leaves.
	third, err := json.Marshal(sampleRequest("t2i", 3, 3))
	if err != nil {
		t.Fatal(err)
	}
	appendFile(t, path, third[:len(third)/2])

	got, warnings, err := ReadRequests(t.Context(), path)
	if err != nil {
		t.Fatalf("ReadRequests: %v", err)
	}
	want := []RequestResult{sampleRequest("t2i", 1, 3), sampleRequest("t2i", 2, 3)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if len(warnings) != 1 {
		t.Fatalf("warnings = %v, want one", warnings)
	}
	var tl *truncatedLineError
	if !errors.As(warnings[0], &tl) || tl.Line != 3 || tl.Path != path {
		t.Errorf("warning = %#v, want a truncatedLineError for %s:3", warnings[0], path)
	}
}

func TestReadRequestsLastLineWithoutNewline(t *testing.T) {
	// A complete object that lost only its newline is kept, silently.
	path := filepath.Join(t.TempDir(), RequestsFile)
	b, _ := json.Marshal(sampleRequest("a", 1, 1))
	appendFile(t, path, b)
	got, warnings, err := ReadRequests(t.Context(), path)
	if err != nil || len(warnings) > 0 || len(got) != 1 {
		t.Errorf("ReadRequests = %d requests, warnings %v, err %v; want 1, none, nil", len(got), warnings, err)
	}
}

func TestReadRequestsErrors(t *testing.T) {
	dir := t.TempDir()
	good, _ := json.Marshal(sampleRequest("a", 1, 2))
	tests := []struct {
		name    string
		content string
		want    string // in the error
	}{
		{"bad line in the middle", string(good) + "\n{\"case\":\n" + string(good) + "\n", ":2: "},
		{"bad last line with its newline", string(good) + "\nnot json\n", ":2: "},
		{"wrong type", `{"case":"a","index":"one"}` + "\n", ":1: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".jsonl")
			appendFile(t, path, []byte(tt.content))
			_, _, err := ReadRequests(t.Context(), path)
			if err == nil || !strings.Contains(err.Error(), path+tt.want) {
				t.Errorf("ReadRequests error = %v, want one naming %s%s", err, path, tt.want)
			}
		})
	}
	if _, _, err := ReadRequests(t.Context(), filepath.Join(dir, "missing.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v, want ErrNotExist", err)
	}
	// Blank lines are not requests, and not errors.
	path := filepath.Join(dir, "blank.jsonl")
	appendFile(t, path, []byte("\n"+string(good)+"\n\n"))
	if got, w, err := ReadRequests(t.Context(), path); err != nil || len(w) > 0 || len(got) != 1 {
		t.Errorf("blank lines: %d requests, warnings %v, err %v", len(got), w, err)
	}
}

func appendFile(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

// ptr is a pointer to v, for a check's value and limit.
func ptr(v float64) *float64 { return &v }

// settled gives every case of res and the run the status st, as the judge would have: the
// writer stores statuses and the readers keep them, and these tests are about the files, not
// the rules (package judge's tests are).
func settled(res *Result, st Status) *Result {
	for i := range res.Cases {
		res.Cases[i].Status = st
	}
	res.Status = st
	return res
}

// sampleResult is a judged result of two requests, the second failed.
func sampleResult() *Result {
	r1, r2 := sampleRequest("t2i", 1, 2), sampleRequest("t2i", 2, 2)
	r2.Checks = append(r2.Checks, Check{Name: OutputValid, Status: Fail, Detail: "png: unexpected EOF"})
	r2.Status = Fail
	return &Result{
		Suite:      "quickstart",
		Lane:       "base",
		GPU:        "h200",
		Partition:  Partition{Index: 0, Total: 1},
		Status:     Fail,
		StartedAt:  time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC),
		FinishedAt: time.Date(2025, 3, 1, 12, 1, 0, 0, time.UTC),
		Cases: []CaseResult{{
			ID: "t2i", Server: "ref", Modality: "image", Status: Fail,
			Load:     &Load{DurationMs: 52},
			Requests: []RequestResult{r1, r2},
		}},
	}
}

func TestWriterResultsRoundTrip(t *testing.T) {
	rec, dir := newTestWriter(t)
	res := sampleResult()
	// The writer stores the judge's statuses as they are: it computes none.
	if err := rec.Results(res); err != nil {
		t.Fatal(err)
	}
	if res.Schema != Schema || res.Status != Fail || res.Cases[0].Status != Fail || res.Cases[0].Requests[1].Status != Fail {
		t.Errorf("Results changed the judged statuses: schema %q, run %s, case %s, request 2 %s", res.Schema, res.Status, res.Cases[0].Status,
			res.Cases[0].Requests[1].Status)
	}
	got, err := ReadContext(t.Context(), filepath.Join(dir, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(res, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	wantStages := []string{"TextEncodingStage", "DenoisingStage", "DecodingStage"}
	var gotStages []string
	for _, st := range got.Cases[0].Requests[0].Stages {
		gotStages = append(gotStages, st.Name)
	}
	if diff := cmp.Diff(wantStages, gotStages); diff != "" {
		t.Errorf("stage order (-want +got):\n%s", diff)
	}
	raw, err := os.ReadFile(filepath.Join(dir, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"stages_ms": {`) || !strings.HasPrefix(string(raw), "{\n  \"schema\": \"diffusion-check/results/v1\"") {
		t.Errorf("results.json is not the indented v1 form:\n%.300s", raw)
	}
	if fi, err := os.Stat(filepath.Join(dir, ResultsFile)); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("results.json mode: %v, %v; want 0644", fi.Mode(), err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	if len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

// TestWriterRefusesAnUnjudgedResult: a result whose run, case or request has no status, or a
// word that is not a status, is not written (the writer stores statuses, it never computes
// them), and the error names where.
func TestWriterRefusesAnUnjudgedResult(t *testing.T) {
	rec, dir := newTestWriter(t)
	res := sampleResult()
	res.Cases[0].Requests[1].Status = ""
	err := rec.Results(res)
	if err == nil || !strings.Contains(err.Error(), `case t2i request 2/2: status "" is not a judged one`) {
		t.Fatalf("err %v, want a refusal naming the request", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ResultsFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("results.json written for an unjudged result (%v)", err)
	}
	res.Cases[0].Requests[1].Status, res.Status = Fail, "green"
	if err := rec.Results(res); err == nil || !strings.Contains(err.Error(), `the run's status "green" is not a judged one`) {
		t.Errorf("err %v, want the run's status refused", err)
	}
}

// TestWriterResultsAtomic rewrites results.json over and over, with contents of different
// sizes, while a reader parses it: every read must see one whole file.
func TestWriterResultsAtomic(t *testing.T) {
	rec, dir := newTestWriter(t)
	path := filepath.Join(dir, ResultsFile)
	if err := rec.Results(sampleResult()); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(done)
		for i := range 200 {
			res := sampleResult()
			for range i % 7 { // vary the size
				res.Errors = append(res.Errors, strings.Repeat("x", 1000))
			}
			if err := rec.Results(res); err != nil {
				t.Error(err)
				return
			}
		}
	})
	reads := 0
	for {
		select {
		case <-done:
			wg.Wait()
			if reads == 0 {
				t.Error("the reader never ran")
			}
			return
		default:
		}
		if _, err := ReadContext(t.Context(), path); err != nil {
			t.Fatalf("read %d: %v", reads, err)
		}
		reads++
	}
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		content string
		want    string
	}{
		{"no schema", `{"suite":"x"}`, `no.json: no "schema" field: not a diffusion-check results file`},
		{"other schema", `{"schema":"diffusion-check/results/v2"}`,
			`other.json: schema "diffusion-check/results/v2" is not supported (want "diffusion-check/results/v1")`},
		{"not json", "{\n  \"schema\": \"diffusion-check/results/v1\",\n  oops\n}", `bad.json:3: invalid character`},
		{"wrong type", "{\n\"schema\": \"diffusion-check/results/v1\",\n\"cases\": 3}", `type.json:3: json: cannot unmarshal number`},
		{"not an object", `[]`, `array.json:1: json: cannot unmarshal array`},
		{"missing request", `{"schema":"diffusion-check/results/v1","cases":[{"id":"t2i","requests":[{"index":1,"of":3},{"index":3,"of":3}]}]}`,
			`missing.json: case t2i: request 2/3 is missing`},
		{"duplicated request", `{"schema":"diffusion-check/results/v1","cases":[{"id":"t2i","requests":[{"index":1,"of":2},{"index":1,"of":2}]}]}`,
			`dup.json: case t2i: request 1/2 appears twice`},
		{"index out of range", `{"schema":"diffusion-check/results/v1","cases":[{"id":"t2i","requests":[{"index":0,"of":1}]}]}`,
			`range.json: case t2i: request index 0 is outside 1..1`},
		{"confirm not marked", `{"schema":"diffusion-check/results/v1","cases":[{"id":"t2i","requests":[{"index":1,"of":1}],"confirm":[{"index":1,"of":2}]}]}`,
			`unmarked.json: case t2i: confirm[0] is not marked "confirm": true`},
		{"confirm out of order",
			`{"schema":"diffusion-check/results/v1","cases":[{"id":"t2i","requests":[{"index":1,"of":1}],"confirm":[{"index":2,"of":2,"confirm":true}]}]}`,
			`order.json: case t2i: confirm[0] is confirmation request 2/2, want 1 of at least 1, in the order sent`},
		// The statuses are the run's judge's: checked when read, never computed.
		{"request without status",
			`{"schema":"diffusion-check/results/v1","status":"pass","cases":[{"id":"t2i","status":"pass","requests":[{"index":1,"of":1}]}]}`,
			`nostatus.json: case t2i request 1/1: status "" is not a judged one`},
		{"run status not ours", `{"schema":"diffusion-check/results/v1","status":"green","cases":[]}`,
			`green.json: the run's status "green" is not a judged one`},
	}
	names := map[string]string{"no schema": "no.json", "other schema": "other.json", "not json": "bad.json", "wrong type": "type.json",
		"not an object":   "array.json",
		"missing request": "missing.json", "duplicated request": "dup.json", "index out of range": "range.json",
		"confirm not marked": "unmarked.json", "confirm out of order": "order.json", "request without status": "nostatus.json",
		"run status not ours": "green.json"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, names[tt.name])
			if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadContext(t.Context(), path)
			if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, tt.want)) {
				t.Errorf("Read error = %v, want one containing %q", err, filepath.Join(dir, tt.want))
			}
		})
	}
}

func TestWriterArtifactDir(t *testing.T) {
	rec, dir := newTestWriter(t)
	for _, tt := range []struct {
		confirm bool
		want    string
	}{{false, "request-2"}, {true, "confirm-2"}} {
		got, err := rec.ArtifactDir("t2i", 2, tt.confirm)
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(dir, "artifacts", "t2i", tt.want); got != want {
			t.Errorf("ArtifactDir(confirm %v) = %s, want %s", tt.confirm, got, want)
		}
		if fi, err := os.Stat(got); err != nil || !fi.IsDir() {
			t.Errorf("ArtifactDir did not create %s: %v", got, err)
		}
	}
	for _, bad := range []struct {
		id string
		i  int
	}{{"", 1}, {".", 1}, {"..", 1}, {"a/b", 1}, {`a\b`, 1}, {"/abs", 1}, {"t2i", 0}} {
		if d, err := rec.ArtifactDir(bad.id, bad.i, false); err == nil {
			t.Errorf("ArtifactDir(%q, %d) = %s, want an error", bad.id, bad.i, d)
		}
	}
}
