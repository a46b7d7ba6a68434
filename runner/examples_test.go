package runner

import (
	"path/filepath"
	"testing"

	"github.com/diffusion-check/diffusion-check/baselines"
	"github.com/diffusion-check/diffusion-check/runner/suite"
)

// TestSGLangExamples loads the real-world example suites with their SGLang-format baseline and
// threshold files, and plans them from the baselines' estimates.
func TestSGLangExamples(t *testing.T) {
	for _, tc := range []struct {
		file  string
		cases int
	}{{"h100.yaml", 2}, {"5090.yaml", 1}} {
		path := filepath.Join("..", "examples", "sglang", tc.file)
		s, err := suite.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := baselines.ThresholdsFor(s.Thresholds, s.GPU); err != nil {
			t.Errorf("%s: thresholds: %v", tc.file, err)
		}
		if p, err := baselines.Find(s.Baselines, s.GPU); err != nil {
			t.Errorf("%s: %v", tc.file, err)
		} else if _, err := baselines.Load(p); err != nil {
			t.Errorf("%s: perf baselines: %v", tc.file, err)
		}
		items, err := SuiteItems(s, "extra", "")
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if len(items) != tc.cases {
			t.Errorf("%s: %d cases, want %d", tc.file, len(items), tc.cases)
		}
		for _, it := range items {
			if it.Source != "baseline" {
				t.Errorf("%s: case %s estimated from %s, want the baseline file", tc.file, it.Case, it.Source)
			}
		}
	}
}
