package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/diffusion-check/diffusion-check/internal/media"
)

// serveEncoders are the encoders the reference server cannot do without: its videos are H.264
// with AAC audio (media.EncodeVideo).
var serveEncoders = []string{"libx264", "aac"}

// probeMediaTools probes ffmpeg and ffprobe once, at the start of a command that decodes or
// encodes media (run, compare, serve), and returns them for the command to pass down (the
// runner's Options.Tools, the compare cache's Helpers, the reference server's Config.Tools):
// the options the media path passes then are the ones this ffmpeg understands. An ffmpeg that
// is missing, older than media.MinRelease or without what the command needs (the named
// encoders) stops the command here, naming the version found and the minimum (exit 3), rather
// than making every request's output look undecodable.
//
// The answer is kept in the user's cache folder (probeCacheFile) while both programs are the
// files it probed (media.CachedProbe), so a short command does not start five ffmpeg
// processes first.
func probeMediaTools(ctx context.Context, e env, encoders ...string) (media.Tools, error) {
	t, err := media.CachedProbe(ctx, probeCacheFile(e))
	if err == nil {
		err = t.Need(encoders...)
	}
	return toolsOrError(t, err)
}

// inheritMediaTools is probeMediaTools for a process that a diffusion-check run started (a
// builtin server): it takes the run's probe from media.ToolsEnv when that names the programs
// on this process's PATH, and probes itself otherwise.
func inheritMediaTools(ctx context.Context, e env, encoders ...string) (media.Tools, error) {
	t, ok := media.Inherit(e.getenv(media.ToolsEnv))
	if !ok {
		return probeMediaTools(ctx, e, encoders...)
	}
	return toolsOrError(t, t.Need(encoders...))
}

// probeCacheFile is where probeMediaTools keeps its probe: ffmpeg-probe.json in the user's
// cache folder (cacheBase); "" when there is none.
func probeCacheFile(e env) string {
	base := cacheBase(e)
	if base == "" {
		return ""
	}
	return filepath.Join(base, "ffmpeg-probe.json")
}

// toolsOrError is the probed t, or the error that stops the command.
func toolsOrError(t media.Tools, err error) (media.Tools, error) {
	if err != nil {
		return media.Tools{}, fmt.Errorf("checking ffmpeg and ffprobe: %w", err)
	}
	return t, nil
}

// doctorCmd says whether this machine can run diffusion-check's media path: ffmpeg and ffprobe
// found, their versions, the options chosen for them and the encoders the reference server
// needs; exit 3, with what to install, when it cannot. The setup action runs it.
func doctorCmd(ctx context.Context, e env, args []string) (int, error) {
	fs := newFlags("doctor", e)
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if fs.NArg() > 0 {
		return 0, usagef("unexpected arguments %q", fs.Args())
	}
	t, err := media.ProbeTools(ctx)
	if err != nil {
		return 0, fmt.Errorf("checking ffmpeg and ffprobe: %w", err)
	}
	fmt.Fprintf(e.stdout, "ffmpeg   %s  %s\n", t.FFmpeg.Path, t.FFmpeg)
	fmt.Fprintf(e.stdout, "ffprobe  %s  %s\n", t.FFprobe.Path, t.FFprobe)
	fmt.Fprintf(e.stdout, "frames passed through with: %s\n", strings.Join(t.Passthrough(), " "))
	var have []string
	for _, enc := range append(append([]string(nil), serveEncoders...), "ffv1", "libwebp") {
		mark := "no"
		if t.HasEncoder(enc) {
			mark = "yes"
		}
		have = append(have, enc+" "+mark)
	}
	fmt.Fprintf(e.stdout, "encoders: %s\n", strings.Join(have, ", "))
	if err := t.Need(serveEncoders...); err != nil {
		return 0, fmt.Errorf("the reference server (serve, builtin: servers) cannot run: %w", err)
	}
	fmt.Fprintf(e.stdout, "ok: FFmpeg %s or newer is supported; run, compare and serve can start\n", media.MinRelease)
	return exitOK, nil
}
