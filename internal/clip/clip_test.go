package clip

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func scorerPath(t *testing.T) string {
	p, err := filepath.Abs(filepath.Join("testdata", "clip-scorer.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	return p
}

func TestScorer(t *testing.T) {
	script := scorerPath(t)
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a1, a2, b := write("a1.png", "same"), write("a2.png", "same"), write("b.png", "other")
	pairs := []Pair{{Output: a1, GroundTruth: a2}, {Output: a1, GroundTruth: b}}
	for _, tc := range []struct {
		mode    string
		timeout time.Duration
		want    []float64
		err     string
	}{
		{mode: "", want: []float64{1, 0.5}},
		{mode: "short", want: []float64{0.5}, err: "1 scores for 2 pairs"},
		{mode: "garbage", err: `read {"scores": [...]} from stdout`},
		{mode: "fail", err: "model not found"},
		{mode: "sleep", timeout: 300 * time.Millisecond, err: "no answer within 300ms"},
	} {
		t.Run("mode="+tc.mode, func(t *testing.T) {
			s := &Scorer{Command: []string{"env", "CLIP_SCORER_MODE=" + tc.mode, script}, Timeout: tc.timeout}
			got, err := s.Score(t.Context(), pairs)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("error %v, want containing %q", err, tc.err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
	s := &Scorer{Command: []string{"env", "CLIP_SCORER_MODE=null", script}}
	got, err := s.Score(t.Context(), pairs)
	if err != nil || len(got) != 2 || !math.IsNaN(got[0]) {
		t.Errorf("null scores: %v, %v; want two NaN", got, err)
	}
}

func FuzzParseScores(f *testing.F) {
	for _, s := range []string{`{"scores":[1,0.5,null]}`, `{"scores":[]}`, `{}`, `{"scores":1}`, `[]`, `{"scores":[1]} {}`, `{"x":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		scores, err := ParseScores(b)
		if err != nil && scores != nil {
			t.Errorf("scores %v with error %v", scores, err)
		}
	})
}
