// Package mediatest holds test helpers shared by the packages that run ffmpeg.
package mediatest

import (
	"os/exec"
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
