package media

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/proc"
)

// Tools is what the installed ffmpeg and ffprobe are and understand, probed once at start
// (ProbeTools) and passed down as a value: every decode, probe and encode is a method of it,
// so that the options it passes are the ones this ffmpeg understands (no request's output is
// called undecodable for an option this ffmpeg lacks), at the niceness it carries (Niced). A
// zero Tools (OnPath) is the ffmpeg on PATH, probed once at its first use.
type Tools struct {
	FFmpeg, FFprobe Version
	// Encoders are the names ffmpeg's -encoders lists (libx264, aac, ffv1, libwebp, ...).
	Encoders []string
	// passthrough is the output option that passes every decoded frame on as it is, neither
	// duplicated nor dropped to fit a rate: -fps_mode from ffmpeg 5.1, -vsync before it (5.1
	// deprecated -vsync in its favour).
	passthrough []string
	// nice is how far below this process its programs run (Niced).
	nice proc.Nice
}

// Version is one program's version as its -version banner says it.
type Version struct {
	// Path is where the program was found on PATH.
	Path string
	// Banner is the version word of the first line: "4.4.2-0ubuntu0.22.04.1", "n7.1",
	// "N-47683-g0e8eb07980-static" (a build from git, which names no release).
	Banner string
	// AVUtil is libavutil's version (major, minor, micro), which every build prints and which
	// places a build from git between two releases.
	AVUtil [3]int
}

// release pairs an FFmpeg release with the libavutil version it shipped (FFmpeg's
// RELEASE_NOTES and libavutil/version.h at each release tag).
type release struct {
	name   string
	avutil [2]int
}

// releases lists the releases that a libavutil version is placed against, oldest first.
var releases = []release{
	{"4.0", [2]int{56, 14}}, {"4.1", [2]int{56, 22}}, {"4.2", [2]int{56, 31}}, {"4.3", [2]int{56, 51}},
	{"4.4", [2]int{56, 70}}, {"5.0", [2]int{57, 17}}, {"5.1", [2]int{57, 28}}, {"6.0", [2]int{58, 2}},
	{"6.1", [2]int{58, 29}}, {"7.0", [2]int{59, 8}}, {"7.1", [2]int{59, 39}}, {"8.0", [2]int{60, 8}},
}

// MinRelease is the oldest FFmpeg the media path supports: the oldest one it was tested with
// (docs/ffmpeg.md), the static 4.x builds of the npm packages @ffmpeg-installer/linux-x64 and
// @ffprobe-installer/linux-x64 4.1.0. Ubuntu 22.04's 4.4, the ffmpeg of SGLang's images, is newer.
const MinRelease = "4.1"

// minAVUtil is MinRelease's libavutil version.
var minAVUtil = [2]int{56, 22}

// Release names the FFmpeg release of the build: the newest release whose libavutil it has
// ("4.4", or "4.1+" for a build from git after 4.1), "" when it is older than every release
// listed.
func (v Version) Release() string {
	name := ""
	exact := false
	for _, r := range releases {
		if v.AVUtil[0] > r.avutil[0] || v.AVUtil[0] == r.avutil[0] && v.AVUtil[1] >= r.avutil[1] {
			name, exact = r.name, v.AVUtil[0] == r.avutil[0] && v.AVUtil[1] == r.avutil[1]
		}
	}
	if name != "" && !exact && !strings.HasPrefix(strings.TrimPrefix(v.Banner, "n"), name) {
		name += "+"
	}
	return name
}

// String is the version for people: "4.4.2-0ubuntu0.22.04.1 (libavutil 56.70.100)".
func (v Version) String() string {
	return fmt.Sprintf("%s (libavutil %d.%d.%d, FFmpeg %s)", v.Banner, v.AVUtil[0], v.AVUtil[1], v.AVUtil[2], orUnknown(v.Release()))
}

func orUnknown(s string) string {
	if s == "" {
		return "older than " + releases[0].name
	}
	return s
}

// supported reports whether the build is at least MinRelease.
func (v Version) supported() bool {
	return v.AVUtil[0] > minAVUtil[0] || v.AVUtil[0] == minAVUtil[0] && v.AVUtil[1] >= minAVUtil[1]
}

// UnsupportedError says that ffmpeg or ffprobe is missing, too old, or lacks what the media
// path needs; a command that decodes media refuses to start with it (exit 3).
type UnsupportedError struct {
	Program string // "ffmpeg" or "ffprobe"
	Found   string // the version found, "" when the program is missing
	Problem string
}

func (e *UnsupportedError) Error() string {
	if e.Found == "" {
		return fmt.Sprintf("%s: %s; install FFmpeg %s or newer (ffmpeg and ffprobe: apt-get install ffmpeg)", e.Program, e.Problem, MinRelease)
	}
	return fmt.Sprintf("%s %s: %s; install FFmpeg %s or newer (ffmpeg and ffprobe: apt-get install ffmpeg)", e.Program, e.Found, e.Problem, MinRelease)
}

// bannerLine matches the first line of -version: "ffmpeg version 4.4.2-0ubuntu0.22.04.1 Copyright ...".
var bannerLine = regexp.MustCompile(`(?m)^(ffmpeg|ffprobe) version (\S+)`)

// avutilLine matches libavutil's line of -version: "libavutil      56. 70.100 / 56. 70.100".
var avutilLine = regexp.MustCompile(`(?m)^libavutil\s+(\d+)\.\s*(\d+)\.\s*(\d+)`)

// ParseVersion reads the output of `ffmpeg -version` (or ffprobe's) for program.
func ParseVersion(program string, out []byte) (Version, error) {
	m := bannerLine.FindSubmatch(out)
	if m == nil || string(m[1]) != program {
		return Version{}, fmt.Errorf("%s -version: no %q line", program, program+" version")
	}
	v := Version{Banner: string(m[2])}
	a := avutilLine.FindSubmatch(out)
	if a == nil {
		return Version{}, fmt.Errorf("%s -version: no libavutil line (a build without libavutil is not FFmpeg's)", program)
	}
	for i := range v.AVUtil {
		n, err := strconv.Atoi(string(a[i+1]))
		if err != nil {
			return Version{}, fmt.Errorf("%s -version: libavutil version %q: %w", program, a[0], err)
		}
		v.AVUtil[i] = n
	}
	return v, nil
}

// hasOption reports whether `ffmpeg -h long` lists the option (given without its dash).
func hasOption(help []byte, name string) bool {
	for line := range strings.SplitSeq(string(help), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "-"+name {
			return true
		}
	}
	return false
}

// listed returns the names of `ffmpeg -filters` or `ffmpeg -encoders`: each line after the
// legend is flags, then the name (" T.. trim  V->V  Pick one continuous section ...",
// " V....D libx264  libx264 H.264 ..."). The legend's lines end at a line of dashes (-encoders)
// or hold " = " ("T.. = Timeline support"), and are skipped.
func listed(out []byte) []string {
	var names []string
	for line := range strings.SplitSeq(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || strings.Contains(line, " = ") || strings.Trim(f[0], "-") == "" {
			continue
		}
		names = append(names, f[1])
	}
	return names
}

// ProbeTools finds ffmpeg and ffprobe on PATH and asks each for its version, and ffmpeg for the
// options and filters the media path uses. It fails with an *UnsupportedError when one is
// missing, older than MinRelease, or lacks them, and with another error when one could not be
// run.
func ProbeTools(ctx context.Context) (Tools, error) {
	type answer struct {
		out []byte
		err error
	}
	jobs := map[string][]string{
		"ffmpeg -version":  {"ffmpeg", "-hide_banner", "-version"},
		"ffprobe -version": {"ffprobe", "-hide_banner", "-version"},
		"ffmpeg -h long":   {"ffmpeg", "-hide_banner", "-h", "long"},
		"ffmpeg -filters":  {"ffmpeg", "-hide_banner", "-filters"},
		"ffmpeg -encoders": {"ffmpeg", "-hide_banner", "-encoders"},
	}
	var t Tools
	for _, p := range []struct {
		name string
		into *Version
	}{{"ffmpeg", &t.FFmpeg}, {"ffprobe", &t.FFprobe}} {
		path, err := exec.LookPath(p.name)
		if err != nil {
			return Tools{}, &UnsupportedError{Program: p.name, Problem: "not found on PATH"}
		}
		p.into.Path = path
	}
	answers := make(map[string]answer, len(jobs))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for what, argv := range jobs {
		wg.Go(func() {
			var stdout bytes.Buffer
			stderr := &proc.Tail{N: 4 << 10}
			cmd := proc.Command(ctx, waitDelay, argv[0], argv[1:]...)
			cmd.Stdout, cmd.Stderr = &stdout, stderr
			err := cmd.Run()
			if err != nil {
				err = ffmpegError(ctx, "ask "+what, err, stderr)
			}
			mu.Lock()
			answers[what] = answer{stdout.Bytes(), err}
			mu.Unlock()
		})
	}
	wg.Wait()
	// The versions first: an FFmpeg too old to answer -h long is refused for its age.
	var err error
	for _, p := range []struct {
		program string
		into    *Version
	}{{"ffmpeg", &t.FFmpeg}, {"ffprobe", &t.FFprobe}} {
		a := answers[p.program+" -version"]
		if a.err != nil {
			return Tools{}, fmt.Errorf("probe ffmpeg and ffprobe: %w", a.err)
		}
		if *p.into, err = versionOf(p.program, p.into.Path, a.out); err != nil {
			return Tools{}, err
		}
	}
	for _, what := range []string{"ffmpeg -h long", "ffmpeg -filters", "ffmpeg -encoders"} {
		if err := answers[what].err; err != nil {
			return Tools{}, fmt.Errorf("probe ffmpeg and ffprobe: %w", err)
		}
	}
	return t.withCapabilities(answers["ffmpeg -h long"].out, answers["ffmpeg -filters"].out, answers["ffmpeg -encoders"].out)
}

// versionOf parses a program's -version and refuses a build older than MinRelease.
func versionOf(program, path string, out []byte) (Version, error) {
	v, err := ParseVersion(program, out)
	if err != nil {
		return Version{}, &UnsupportedError{Program: program, Found: path, Problem: err.Error()}
	}
	v.Path = path
	if !v.supported() {
		return Version{}, &UnsupportedError{Program: program, Found: v.String(), Problem: "older than the minimum, FFmpeg " + MinRelease + " (libavutil " +
			strconv.Itoa(minAVUtil[0]) + "." + strconv.Itoa(minAVUtil[1]) + ")"}
	}
	return v, nil
}

// requiredFilters are the filters the media path runs: trim cuts the proof of the yuv420p
// conversion to one frame (frames.go).
var requiredFilters = []string{"trim"}

// passthroughOptions are the output options that pass every decoded frame on as it is, in the
// order a probe prefers them: -fps_mode from FFmpeg 5.1, -vsync before it. They are only read.
var passthroughOptions = [][]string{{"-fps_mode", "passthrough"}, {"-vsync", "passthrough"}}

// withCapabilities completes t from ffmpeg's -h long, -filters and -encoders.
func (t Tools) withCapabilities(help, filters, encoders []byte) (Tools, error) {
	for _, o := range passthroughOptions {
		if hasOption(help, strings.TrimPrefix(o[0], "-")) {
			t.passthrough = o
			break
		}
	}
	if t.passthrough == nil {
		return Tools{}, &UnsupportedError{Program: "ffmpeg", Found: t.FFmpeg.String(),
			Problem: "it has neither -fps_mode nor -vsync (ffmpeg -h long), so frames cannot be passed through as decoded"}
	}
	have := listed(filters)
	for _, f := range requiredFilters {
		if !slices.Contains(have, f) {
			return Tools{}, &UnsupportedError{Program: "ffmpeg", Found: t.FFmpeg.String(), Problem: fmt.Sprintf("it has no %s filter (ffmpeg -filters)", f)}
		}
	}
	t.Encoders = listed(encoders)
	return t, nil
}

// Passthrough returns the output option that passes decoded frames on as they are
// ("-fps_mode passthrough", or "-vsync passthrough" before FFmpeg 5.1).
func (t Tools) Passthrough() []string { return slices.Clone(t.resolved().passthrough) }

// HasEncoder reports whether the probed ffmpeg has the named encoder (e.g. "libwebp").
func (t Tools) HasEncoder(name string) bool { return slices.Contains(t.resolved().Encoders, name) }

// Need returns an *UnsupportedError when the probed ffmpeg lacks one of the named encoders
// (what a command that encodes, such as the reference server, cannot do without).
func (t Tools) Need(encoders ...string) error {
	var missing []string
	for _, e := range encoders {
		if !t.HasEncoder(e) {
			missing = append(missing, e)
		}
	}
	if len(missing) > 0 {
		return &UnsupportedError{Program: "ffmpeg", Found: t.FFmpeg.String(), Problem: "it has no " + strings.Join(missing, ", ") + " encoder (ffmpeg -encoders)"}
	}
	return nil
}

// ErrUnsupported is matched (errors.Is) by every *UnsupportedError.
var ErrUnsupported = errors.New("ffmpeg or ffprobe not supported")

// Is makes errors.Is(err, ErrUnsupported) true for an *UnsupportedError.
func (e *UnsupportedError) Is(target error) bool { return target == ErrUnsupported }

// ToolsEnv is the environment variable by which a command hands the Tools it probed to a
// child it starts (run to a builtin server's `serve`), in MarshalText's form: the child takes
// them (Inherit) instead of starting ffmpeg and ffprobe five times again.
const ToolsEnv = "DIFFUSION_CHECK_MEDIA_TOOLS"

// toolsText is the form of Tools that MarshalText writes.
type toolsText struct {
	FFmpeg      Version  `json:"ffmpeg"`
	FFprobe     Version  `json:"ffprobe"`
	Encoders    []string `json:"encoders"`
	Passthrough []string `json:"passthrough"`
}

// MarshalText writes t as JSON, for a child process (Inherit).
func (t Tools) MarshalText() ([]byte, error) {
	return json.Marshal(toolsTextOf(t))
}

// Inherit returns the Tools a parent process probed and handed down (text: MarshalText's
// form, from ToolsEnv) when they are what a probe here would find: both programs at the same
// paths on this process's PATH (a suite's env may change PATH), versions this package
// supports, and one of ffmpeg's two passthrough options. ok is false otherwise (nothing
// handed down, a malformed value, other programs), and the caller probes itself.
func Inherit(text string) (t Tools, ok bool) {
	var v toolsText
	if text == "" || json.Unmarshal([]byte(text), &v) != nil {
		return Tools{}, false
	}
	ffmpeg, err1 := exec.LookPath("ffmpeg")
	ffprobe, err2 := exec.LookPath("ffprobe")
	if err1 != nil || err2 != nil {
		return Tools{}, false
	}
	return v.tools(ffmpeg, ffprobe)
}

// tools are the Tools v describes, when they are believable for the programs at ffmpeg and
// ffprobe: v names those paths, versions this package supports, and one of ffmpeg's
// passthrough options. ok is false otherwise. What another process wrote (a parent's probe,
// the probe cache) is read through it.
func (v toolsText) tools(ffmpeg, ffprobe string) (t Tools, ok bool) {
	if v.FFmpeg.Path != ffmpeg || v.FFprobe.Path != ffprobe || !v.FFmpeg.supported() || !v.FFprobe.supported() ||
		!slices.ContainsFunc(passthroughOptions, func(o []string) bool { return slices.Equal(o, v.Passthrough) }) {
		return Tools{}, false
	}
	return Tools{FFmpeg: v.FFmpeg, FFprobe: v.FFprobe, Encoders: v.Encoders, passthrough: v.Passthrough}, true
}

// modern is the options of FFmpeg 5.1 and later: those of a Tools value that was not probed.
var modern = Tools{passthrough: passthroughOptions[0]}

// unprobeTimeout bounds the probe of a context without Tools.
const unprobeTimeout = 30 * time.Second

// unprobed is the Tools of a zero Tools value (a library caller's): the ffmpeg on PATH,
// probed once, at the first call that needs its options; modern where it cannot be probed (the decode then
// fails with ffmpeg's own error, as it would have).
var unprobed = sync.OnceValue(func() Tools {
	ctx, cancel := context.WithTimeout(context.Background(), unprobeTimeout)
	defer cancel()
	t, err := ProbeTools(ctx)
	if err != nil {
		return modern
	}
	return t
})

// OnPath is the Tools of a library caller that probed nothing (a zero Tools): the ffmpeg and
// ffprobe on PATH, probed once, at the first call that needs their options. A command probes
// at its start instead (ProbeTools), and stops there when they will not do.
func OnPath() Tools { return Tools{} }

// resolved is t, or when t was not probed (a library caller's zero Tools) the ffmpeg on PATH
// as the process probed it once (unprobed), at t's niceness.
func (t Tools) resolved() Tools {
	if t.passthrough != nil {
		return t
	}
	u := unprobed()
	u.nice = t.nice
	return u
}

// Niced is t whose programs run n steps of scheduling niceness below this process
// (proc.Nice): the helpers of work that must not slow the server it measures.
func (t Tools) Niced(n proc.Nice) Tools {
	t.nice = n
	return t
}

// Nice is the niceness t's programs run at (Niced); work in this process beside them (a
// metric) runs at it too (proc.Nice.Run).
func (t Tools) Nice() proc.Nice { return t.nice }
