package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/runner/suite"
)

func TestLoadPerf(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "perf")
	if err := os.Mkdir(missing, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &suite.Suite{Baselines: missing}
	// A folder of <gpu>.json without a GPU class cannot be resolved.
	if _, err := loadPerf(Options{Suite: s, Mode: "check"}); err == nil || !strings.Contains(err.Error(), "GPU class is unknown") {
		t.Errorf("no gpu: %v", err)
	}
	// Check mode needs the file; baseline mode may be making it.
	if _, err := loadPerf(Options{Suite: s, Mode: "check", GPU: "H100"}); err == nil || !strings.Contains(err.Error(), filepath.Join(missing, "h100.json")) {
		t.Errorf("check mode, no file: %v", err)
	}
	p, err := loadPerf(Options{Suite: s, Mode: ModeBaseline, GPU: "h100"})
	if err != nil || p.file != nil || p.enforce || !p.collecting() {
		t.Errorf("baseline mode, no file: %+v %v", p, err)
	}
	// A bad known-failures file is reported with the baseline problem, at once.
	known := filepath.Join(dir, "known.yaml")
	if err := os.WriteFile(known, []byte("- case: a\n  check: b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.KnownFailures = known
	_, err = loadPerf(Options{Suite: s, Mode: "check", GPU: "h100"})
	if err == nil || !strings.Contains(err.Error(), "h100.json") || !strings.Contains(err.Error(), "known.yaml:1: known_failures[0].reason: missing") {
		t.Errorf("both problems: %v", err)
	}
	// No baselines configured: nothing collected, growth still watched with the defaults.
	p, err = loadPerf(Options{Suite: &suite.Suite{}, Mode: "check"})
	if err != nil || p.collecting() || p.tol.RuntimePeakVRAM != 0.02 {
		t.Errorf("no baselines: %+v %v", p, err)
	}
}
