package media

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCachedProbe: the first probe starts the programs and keeps the answer; the next answers
// from the file without starting them (the fakes count their runs); a program replaced (its
// size or time changed) is probed again; a cache file that lies about the programs (another
// path, an unsupported version, an option no ffmpeg has) or is not JSON is not believed.
func TestCachedProbe(t *testing.T) {
	// ffmpeg and ffprobe that answer every question of a probe, and count their runs.
	dir, runs := t.TempDir(), filepath.Join(t.TempDir(), "runs")
	for _, p := range []string{"ffmpeg", "ffprobe"} {
		script := "#!/bin/sh\necho x >>" + runs + "\ncase \"$*\" in\n" +
			"*-version*) printf '%b' '" + p + " version 5.1.9 Copyright\\nlibavutil      57. 28.100 / 57. 28.100\\n';;\n" +
			"*'-h long'*) printf '%b' '-fps_mode  set framerate mode\\n';;\n" +
			"*-filters*) printf '%b' ' T.. trim  V->V  Pick\\n';;\n" +
			"*-encoders*) printf '%b' ' V....D libx264  H.264\\n';;\nesac\n"
		if err := os.WriteFile(filepath.Join(dir, p), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
	count := func() int {
		b, _ := os.ReadFile(runs)
		_ = os.Remove(runs)
		return strings.Count(string(b), "x")
	}
	file := filepath.Join(t.TempDir(), "cache", "ffmpeg-probe.json")
	first, err := CachedProbe(t.Context(), file)
	if err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 5 {
		t.Errorf("the first probe ran the programs %d times, want 5", n)
	}
	again, err := CachedProbe(t.Context(), file)
	if err != nil || count() != 0 {
		t.Fatalf("the second probe: %v, or it ran the programs", err)
	}
	if again.FFmpeg != first.FFmpeg || again.FFprobe != first.FFprobe || !slices.Equal(again.passthrough, first.passthrough) {
		t.Errorf("cached %+v, probed %+v", again, first)
	}
	// The program replaced: another modification time.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "ffmpeg"), later, later); err != nil {
		t.Fatal(err)
	}
	if _, err := CachedProbe(t.Context(), file); err != nil || count() != 5 {
		t.Errorf("a touched ffmpeg was not probed again (%v)", err)
	}
	// A cache that lies is not believed.
	good, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]string{
		"not json":       "{",
		"another path":   strings.Replace(string(good), `"Path":"`+filepath.Join(dir, "ffmpeg")+`"`, `"Path":"/usr/bin/evil"`, 1),
		"an old version": strings.Replace(string(good), `"AVUtil":[57,28,100]`, `"AVUtil":[55,78,100]`, 1),
		"no such option": strings.Replace(string(good), `"-fps_mode"`, `"-evil"`, 1),
	} {
		if bad == string(good) {
			t.Fatalf("%s: the edit changed nothing in %s", name, good)
		}
		if err := os.WriteFile(file, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := CachedProbe(t.Context(), file); err != nil || count() != 5 {
			t.Errorf("%s: the cache was believed (%v)", name, err)
		}
	}
	// No cache file: a probe every time.
	if _, err := CachedProbe(t.Context(), ""); err != nil || count() != 5 {
		t.Errorf("without a cache file: %v", err)
	}
}
