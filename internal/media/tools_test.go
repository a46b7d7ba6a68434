package media

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/internal/media/mediatest"
)

// The -version banners below are the first line and the libavutil line of real builds: the
// static 4.x builds of the npm packages (mediatest.FFmpeg4) and Debian 12's 5.1 as printed here;
// Ubuntu 22.04's 4.4.2 and the 7.x ones with the libavutil version of their release tags
// (libavutil/version.h at n4.4, n7.0, n7.1).
func TestParseVersion(t *testing.T) {
	for _, tc := range []struct {
		name, program, out string
		want               Version
		release            string
		supported          bool
	}{
		{"npm static ffmpeg", "ffmpeg", "ffmpeg version N-47683-g0e8eb07980-static https://johnvansickle.com/ffmpeg/  Copyright (c) 2000-2018 the FFmpeg " +
			"developers\nbuilt with gcc 6.3.0\nlibavutil      56. 24.101 / 56. 24.101\nlibavcodec     58. 42.100 / 58. 42.100\n",
			Version{Banner: "N-47683-g0e8eb07980-static", AVUtil: [3]int{56, 24, 101}}, "4.1+", true},
		{"npm static ffprobe", "ffprobe", "ffprobe version N-48944-g9b069eb14e-static https://johnvansickle.com/ffmpeg/  Copyright (c) 2007-2019 the FFmpeg " +
			"developers\nlibavutil      56. 28.100 / 56. 28.100\n",
			Version{Banner: "N-48944-g9b069eb14e-static", AVUtil: [3]int{56, 28, 100}}, "4.1+", true},
		{"ubuntu 22.04", "ffmpeg", "ffmpeg version 4.4.2-0ubuntu0.22.04.1 Copyright (c) 2000-2021 the FFmpeg developers\nlibavutil      56. 70.100 / 56. 70.100\n",
			Version{Banner: "4.4.2-0ubuntu0.22.04.1", AVUtil: [3]int{56, 70, 100}}, "4.4", true},
		{"debian 12", "ffmpeg", "ffmpeg version 5.1.9-0+deb12u1 Copyright (c) 2000-2026 the FFmpeg developers\nlibavutil      57. 28.100 / 57. 28.100\n",
			Version{Banner: "5.1.9-0+deb12u1", AVUtil: [3]int{57, 28, 100}}, "5.1", true},
		{"7.0.2", "ffmpeg", "ffmpeg version 7.0.2 Copyright (c) 2000-2024 the FFmpeg developers\nlibavutil      59.  8.100 / 59.  8.100\n",
			Version{Banner: "7.0.2", AVUtil: [3]int{59, 8, 100}}, "7.0", true},
		{"n7.1 from git tag", "ffmpeg", "ffmpeg version n7.1 Copyright (c) 2000-2024 the FFmpeg developers\nlibavutil      59. 39.100 / 59. 39.100\n",
			Version{Banner: "n7.1", AVUtil: [3]int{59, 39, 100}}, "7.1", true},
		{"3.4", "ffmpeg", "ffmpeg version 3.4.11 Copyright (c) 2000-2022 the FFmpeg developers\nlibavutil      55. 78.100 / 55. 78.100\n",
			Version{Banner: "3.4.11", AVUtil: [3]int{55, 78, 100}}, "", false},
		{"4.0", "ffmpeg", "ffmpeg version 4.0.6 Copyright (c) 2000-2020 the FFmpeg developers\nlibavutil      56. 14.100 / 56. 14.100\n",
			Version{Banner: "4.0.6", AVUtil: [3]int{56, 14, 100}}, "4.0", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseVersion(tc.program, []byte(tc.out))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseVersion (-want +got):\n%s", diff)
			}
			if r := got.Release(); r != tc.release {
				t.Errorf("Release() = %q, want %q", r, tc.release)
			}
			if s := got.supported(); s != tc.supported {
				t.Errorf("supported() = %v, want %v", s, tc.supported)
			}
		})
	}
	for _, bad := range []string{"", "avconv version 12\nlibavutil 55. 1.0\n", "ffmpeg version 4.4\n"} {
		if v, err := ParseVersion("ffmpeg", []byte(bad)); err == nil {
			t.Errorf("ParseVersion(%q) = %+v, want an error", bad, v)
		}
	}
}

func TestWithCapabilities(t *testing.T) {
	filters := []byte("Filters:\n  T.. = Timeline support\n  A = Audio input/output\n ... abench            A->A       Benchmark part of a filtergraph.\n T.. " +
		"trim              V->V       Pick one continuous section from the input, drop the rest.\n")
	encoders := []byte("Encoders:\n V..... = Video\n ------\n V....D libx264              libx264 H.264 / AVC\n A....D aac                  AAC (Advanced " +
		"Audio Coding)\n")
	for _, tc := range []struct {
		name, help string
		filters    []byte
		want       []string
		err        string
	}{
		{"5.1", "-vsync              set video sync method globally; deprecated, use -fps_mode\n-fps_mode           set framerate mode for matching video " +
			"streams; overrides vsync\n", filters, []string{"-fps_mode", "passthrough"}, ""},
		{"4.x", "-vsync              video sync method\n-frames number      set the number of frames to output\n", filters, []string{"-vsync", "passthrough"}, ""},
		{"neither", "-frames number      set the number of frames to output\n", filters, nil, "neither -fps_mode nor -vsync"},
		{"no trim", "-vsync              video sync method\n", []byte(" ... abench            A->A       Benchmark part of a filtergraph.\n"), nil, "no trim filter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Tools{}.withCapabilities([]byte(tc.help), tc.filters, encoders)
			if tc.err != "" {
				if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want an unsupported error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.passthrough); diff != "" {
				t.Errorf("passthrough (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"libx264", "aac"}, got.Encoders); diff != "" {
				t.Errorf("encoders (-want +got):\n%s", diff)
			}
		})
	}
}

// fakeFFmpeg writes an ffmpeg and an ffprobe that print version's banner (and, for ffmpeg -h,
// help) and returns the folder, to be the whole PATH.
func fakeFFmpeg(t *testing.T, version, avutil, help string) string {
	t.Helper()
	dir := t.TempDir()
	for _, p := range []string{"ffmpeg", "ffprobe"} {
		script := "#!/bin/sh\ncase \"$*\" in\n*-version*) printf '%b' '" + p + " version " + version + " Copyright\\nlibavutil      " + avutil + " / " + avutil +
			"\\n';;\n" +
			"*-h*) printf '%b' '" + help + "';;\n*-filters*) printf '%b' ' T.. trim  V->V  Pick\\n';;\n*) ;;\nesac\n"
		if err := os.WriteFile(filepath.Join(dir, p), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestProbeToolsRefuses: a missing, too old or incapable ffmpeg is refused at the probe with
// the version found and the minimum, not discovered by a request.
func TestProbeToolsRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, path string
		want       []string
	}{
		{"missing", t.TempDir(), []string{"ffmpeg: not found on PATH", "install FFmpeg 4.1 or newer"}},
		{"3.4", fakeFFmpeg(t, "3.4.11", "55. 78.100", "-vsync  video sync method\\n"),
			[]string{"ffmpeg 3.4.11 (libavutil 55.78.100, FFmpeg older than 4.0): older than the minimum, FFmpeg 4.1 (libavutil 56.22)"}},
		{"no passthrough", fakeFFmpeg(t, "9.9", "99. 1.100", "-frames  n\\n"), []string{"ffmpeg 9.9", "neither -fps_mode nor -vsync"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PATH", tc.path)
			_, err := ProbeTools(t.Context())
			if !errors.Is(err, ErrUnsupported) {
				t.Fatalf("err = %v, want ErrUnsupported", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %q, want it to say %q", err, w)
				}
			}
		})
	}
}

// TestProbeToolsInstalled: the ffmpeg of scripts/setup (Debian 12's 5.1) gets -fps_mode.
func TestProbeToolsInstalled(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	tools, err := ProbeTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ffmpeg %s, ffprobe %s, passthrough %q", tools.FFmpeg, tools.FFprobe, tools.passthrough)
	if tools.FFmpeg.AVUtil[0] >= 57 && tools.FFmpeg.AVUtil[1] >= 28 && tools.passthrough[0] != "-fps_mode" {
		t.Errorf("FFmpeg %s: passthrough %q, want -fps_mode", tools.FFmpeg.Release(), tools.passthrough)
	}
	if !tools.HasEncoder("libx264") {
		t.Errorf("no libx264 among %d encoders", len(tools.Encoders))
	}
}

// TestStatic4: with the static FFmpeg 4.x builds first on PATH, the probe picks -vsync, and a
// video decodes to every frame, the same frames as the installed ffmpeg gives; without the
// probe's options (the Tools of the ffmpeg this process probed first) it would not decode at all, which is the failure
// the probe exists for.
func TestStatic4(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	path := testVideo(t, "v.mp4", 64, 48, 13)
	want := decodeAll(OnPath(), t, path)
	t.Setenv("PATH", mediatest.FFmpeg4(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
	tools, err := ProbeTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if r := tools.FFmpeg.Release(); r != "4.1+" || tools.passthrough[0] != "-vsync" {
		t.Fatalf("ffmpeg %s: release %q, passthrough %q; want 4.1+ and -vsync", tools.FFmpeg, r, tools.passthrough)
	}
	got := decodeAll(tools, t, path)
	if len(got) != 13 || !bytes.Equal(bytes.Join(got, nil), bytes.Join(want, nil)) {
		t.Errorf("FFmpeg 4.x decoded %d frames, want the installed ffmpeg's %d, byte for byte", len(got), len(want))
	}
	info, err := tools.Probe(t.Context(), path)
	if err != nil || info.Frames != 13 {
		t.Errorf("Probe with FFmpeg 4.x: %+v, %v", info, err)
	}
	_, err = readAll(t, path)
	if err == nil || !strings.Contains(err.Error(), "fps_mode") {
		t.Errorf("FFmpeg 4.x without its Tools: %v, want ffmpeg to refuse -fps_mode", err)
	}
}

// decodeAll returns every frame of path, as rgb24.
func decodeAll(tools Tools, t *testing.T, path string) [][]byte {
	t.Helper()
	r, err := tools.OpenFramesWith(t.Context(), path, DecodeOptions{Whole: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w, h := r.Size()
	var frames [][]byte
	for {
		buf := make([]byte, 3*w*h)
		err := r.Next(buf)
		if errors.Is(err, io.EOF) {
			return frames
		}
		if err != nil {
			t.Fatalf("frame %d: %v", len(frames), err)
		}
		frames = append(frames, buf)
	}
}

// TestInherit: a probe handed to a child (MarshalText, ToolsEnv) is taken as it was when the
// child's PATH finds the same programs; anything else (another ffmpeg first on PATH, a
// malformed or hand-made value) makes the child probe itself.
func TestInherit(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	tools, err := ProbeTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	text, err := tools.MarshalText()
	if err != nil {
		t.Fatal(err)
	}
	got, ok := Inherit(string(text))
	if !ok || !cmp.Equal(got, tools, cmp.AllowUnexported(Tools{})) {
		t.Fatalf("Inherit of the probe: %+v %v, want %+v", got, ok, tools)
	}
	marshal := func(change func(*Tools)) string {
		v := tools
		change(&v)
		b, err := v.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tc := range []struct{ name, text string }{
		{"nothing handed down", ""},
		{"not JSON", "{"},
		{"no passthrough", marshal(func(v *Tools) { v.passthrough = nil })},
		{"another option", marshal(func(v *Tools) { v.passthrough = []string{"-vf", "passthrough"} })},
		{"another ffmpeg", marshal(func(v *Tools) { v.FFmpeg.Path = "/opt/other/ffmpeg" })},
		{"another ffprobe", marshal(func(v *Tools) { v.FFprobe.Path = "/opt/other/ffprobe" })},
		{"too old", marshal(func(v *Tools) { v.FFmpeg.AVUtil = [3]int{55, 78, 100} })},
	} {
		if _, ok := Inherit(tc.text); ok {
			t.Errorf("%s: taken, want a probe", tc.name)
		}
	}
	// The same value, with FFmpeg 4.x first on the child's PATH: other programs.
	t.Setenv("PATH", mediatest.FFmpeg4(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
	if _, ok := Inherit(string(text)); ok {
		t.Error("taken with another ffmpeg first on PATH, want a probe")
	}
}

// TestNicedToolsRunNiced: the programs of Tools.Niced(n) run n steps of niceness below this
// process, whoever calls them, and a zero Tools's at this process's own; Niced keeps the rest
// of the Tools (nice(1) without arguments prints its own niceness).
func TestNicedToolsRunNiced(t *testing.T) {
	niceness := func(tools Tools) int {
		t.Helper()
		out, err := tools.command(t.Context(), "nice").Output()
		if err != nil {
			t.Skipf("nice: %v", err)
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(out)))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	base := niceness(OnPath())
	if base > 12 {
		t.Skipf("this process already runs at niceness %d", base)
	}
	probed := Tools{Encoders: []string{"libx264"}, passthrough: passthroughOptions[0]}
	niced := probed.Niced(7)
	if got := niceness(niced); got != base+7 {
		t.Errorf("Niced(7): niceness %d, want %d", got, base+7)
	}
	if niced.Nice() != 7 || !niced.HasEncoder("libx264") || !slices.Equal(niced.Passthrough(), passthroughOptions[0]) {
		t.Errorf("Niced(7) = %+v: want the same tools, nice 7", niced)
	}
	if got := niceness(probed); got != base {
		t.Errorf("Niced changed the Tools it was called on: niceness %d, want %d", got, base)
	}
}
