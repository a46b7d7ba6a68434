package gpumem

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/google/go-cmp/cmp"
)

// fakeProc writes a /proc with a server (100), its worker (101), and an unrelated process
// (200), each with an RssAnon.
func fakeProc(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, p := range []struct {
		pid, ppid string
		anonKiB   string
	}{{"100", "1", "1024"}, {"101", "100", "3072"}, {"200", "1", "999999"}, {"300", "1", "2048"}} {
		d := filepath.Join(dir, p.pid)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		stat := p.pid + " (py thon) S " + p.ppid + " 1 1 0 -1\n"
		status := "Name:\tpython\nVmRSS:\t9999 kB\nRssAnon:\t" + p.anonKiB + " kB\nRssFile:\t1 kB\n"
		if err := os.WriteFile(filepath.Join(d, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "status"), []byte(status), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// hostOnly checks a sampler without NVML: Unavailable names why (holding reason), and a
// session on fakeProc's server still measures its host memory, with that reason as its one
// note.
func hostOnly(t *testing.T, s *Sampler, reason string) {
	t.Helper()
	if got := s.Unavailable(); !strings.Contains(got, "nvml unavailable") || !strings.Contains(got, reason) {
		t.Fatalf("Unavailable() = %q, want nvml unavailable: ...%s...", got, reason)
	}
	sess, err := s.Start(t.Context(), 100)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Stop()
	p := sess.Window().End()
	if diff := cmp.Diff(map[string]float64{checks.SourceHostAnon: 4}, p.MiB); diff != "" {
		t.Errorf("peaks without NVML (-want +got):\n%s", diff)
	}
	if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], reason) {
		t.Errorf("notes %q, want the reason NVML is unavailable (%s)", p.Notes, reason)
	}
}
