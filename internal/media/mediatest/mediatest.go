package mediatest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// NeedFFmpeg skips a test when ffmpeg or ffprobe is not installed (scripts/setup installs them).
func NeedFFmpeg(t testing.TB) {
	t.Helper()
	for _, name := range []string{"ffmpeg", "ffprobe"} {
		if _, err := exec.LookPath(name); err != nil {
			t.Skipf("%s not installed", name)
		}
	}
}

// ProofWrapper writes, in a new folder, an ffmpeg that runs the real one with opts inserted
// before its pipe:3 output (the proof of the yuv420p conversion: media/frames.go), appending
// its arguments to log when log is not empty; it returns the folder, to go first on PATH.
func ProofWrapper(t testing.TB, log string, opts ...string) string {
	t.Helper()
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Fatal(err)
	}
	var script strings.Builder
	script.WriteString("#!/bin/sh\n")
	if log != "" {
		fmt.Fprintf(&script, "echo \"$*\" >>'%s'\n", log)
	}
	fmt.Fprintf(&script, "for a; do shift; if [ \"$a\" = pipe:3 ]; then set -- \"$@\" %s pipe:3; else set -- \"$@\" \"$a\"; fi; done\n", strings.Join(opts, " "))
	fmt.Fprintf(&script, "exec '%s' \"$@\"\n", ffmpeg)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ffmpeg"), []byte(script.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
