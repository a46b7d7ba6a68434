package media

import (
	"bytes"
	"context"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// waitDelay is how long a cancelled ffmpeg/ffprobe gets between SIGTERM and SIGKILL, and how long
// Wait waits for its output pipes to close.
const waitDelay = 5 * time.Second

// command returns an ffmpeg/ffprobe command, at t's niceness, that is terminated (SIGTERM to
// its process group) when ctx is done and killed waitDelay later.
func (t Tools) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return t.nice.Command(ctx, waitDelay, name, args...)
}

// ffmpegPrefix matches the "[mov,mp4,m4a,3gp,3g2,mj2 @ 0x55d0c1a2b3c0] " context that ffmpeg
// puts before its messages; the address differs between runs and helps nobody.
var ffmpegPrefix = regexp.MustCompile(`^\[[^\]]* @ 0x[0-9a-f]+\] *`)

// messages returns ffmpeg's stderr as cleaned lines: context prefixes and a leading "path: "
// removed, repeats and blank lines dropped, at most the last maxLines lines.
func messages(stderr []byte, path string, maxLines int) []string {
	var out []string
	seen := map[string]bool{}
	for line := range strings.SplitSeq(string(stderr), "\n") {
		line = strings.TrimSpace(ffmpegPrefix.ReplaceAllString(strings.TrimSpace(line), ""))
		if path != "" {
			line = strings.TrimPrefix(line, path+": ")
		}
		if line == "" || seen[line] {
			continue
		}
		seen[line] = true
		out = append(out, line)
	}
	if len(out) > maxLines {
		out = out[len(out)-maxLines:]
	}
	return out
}

// stderrText formats ffmpeg's stderr for an error message: its last lines, joined with "; ".
func stderrText(stderr []byte, path string) string {
	return strings.Join(messages(bytes.TrimSpace(stderr), path, 4), "; ")
}
