package suite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/fault"
	"github.com/diffusion-check/diffusion-check/internal/strictdecode"
	"github.com/google/go-cmp/cmp"
)

func ptr[T any](v T) *T { return &v }

// knownFaults is the list an unknown fault's error names: the fault table's own (its order
// and wording are internal/fault's tests' concern, not the suite loader's).
var knownFaults = strings.Join(fault.Known(), ", ")

func abs(t *testing.T, path string) string {
	t.Helper()
	p, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// errLines splits a joined error into its lines, the form users read.
func errLines(err error) []string {
	if err == nil {
		return nil
	}
	return strings.Split(err.Error(), "\n")
}

func TestLoadFull(t *testing.T) {
	dir := abs(t, "testdata")
	defaults := func(s *Server) *Server {
		s.Ready = Readiness{LogMarker: "Application startup complete.", Health: "/health"}
		s.StartTimeout = 20 * time.Minute
		s.StopGrace = 10 * time.Second
		s.RequestTimeout = 10 * time.Minute
		s.PerfRecordTimeout = 30 * time.Second
		s.PollInterval = 100 * time.Millisecond
		s.StartEstimate = time.Second // every server that takes defaults here is builtin
		s.MaxOutputMB = DefaultMaxOutputMB
		return s
	}
	want := &Suite{
		Path:          filepath.Join(dir, "full.yaml"),
		Name:          "full",
		GPU:           "5090",
		Baselines:     filepath.Join(dir, "baselines/perf"),
		Thresholds:    filepath.Join(dir, "baselines/consistency"),
		GroundTruth:   filepath.Join(dir, "gt"),
		KnownFailures: filepath.Join(dir, "known-failures.yaml"),
		Servers: map[string]*Server{
			"ref": defaults(&Server{
				Name: "ref",
				Builtin: &Builtin{
					Faults: []string{"crash-at=2", "slow-after=1:3"},
					StepMs: 0.5,
					LoadMs: 0,
					Model:  "test/model",
					Lag:    250 * time.Millisecond,
					Timing: "computed",
				},
				Reuse: true,
				Line:  10,
			}),
			"healthy": defaults(&Server{
				Name:    "healthy",
				Builtin: &Builtin{StepMs: 2, LoadMs: 50, Model: "diffusion-check/reference", Timing: "measured"},
				Line:    19,
			}),
			"sglang": {
				Name:              "sglang",
				Command:           []string{"sglang", "serve", "--model-path", "Qwen/Qwen-Image", "--port", "{port}", "--tp", "2"},
				Env:               map[string]string{"SGLANG_DIFFUSION_STAGE_LOGGING": "1", "EMPTY": ""},
				Dir:               filepath.Join(filepath.Dir(dir), "work"),
				Ready:             Readiness{LogMarker: "Uvicorn running", Health: "-"},
				Model:             "Qwen/Qwen-Image",
				StartTimeout:      30 * time.Minute,
				StopGrace:         0,
				RequestTimeout:    5 * time.Minute,
				PerfRecordTimeout: time.Minute,
				PollInterval:      250 * time.Millisecond,
				StartEstimate:     2 * time.Minute,
				MaxOutputMB:       DefaultMaxOutputMB,
				Line:              21,
			},
		},
		Cases: []*Case{
			{
				ID:          "t2i_small",
				Server:      "ref",
				Lane:        "extra",
				Modality:    Image,
				Repeat:      3,
				Concurrency: 2,
				Estimate:    90 * time.Second,
				Timeout:     5 * time.Minute,
				NumGPUs:     2,
				Line:        34,
				Request: Request{
					Prompt:         "a red fox in the snow",
					NegativePrompt: "blurry",
					Size:           "256x128",
					Width:          256,
					Height:         128,
					Seed:           ptr[int64](-1),
					Steps:          8,
					GuidanceScale:  ptr(4.0),
					OutputFormat:   "webp",
					N:              2,
					Images:         []string{filepath.Join(dir, "inputs/edit.png")},
					Extra: map[string]any{
						"enable_teacache": true,
						"cache":           map[string]any{"threshold": 0.2, "layers": []any{1, 2}},
						"mode":            nil,
					},
				},
				Checks: Toggles{
					Perf: ptr(false), Memory: ptr(true), Consistency: ptr(false),
					Audio: ptr(true), PerfRecord: ptr(false), Output: ptr(true), Repeat: ptr(false),
				},
				RepeatLimits: repeatLimits(func(l *checks.RepeatLimits) {
					l.SSIM, l.PSNR, l.DurationDiffS = 0.995, 40, 0.02
					l.Origin = "full.yaml repeat_thresholds (ssim, audio_duration_diff), full.yaml cases[0].repeat_thresholds (psnr), " +
						"built-in repeat defaults (mean_abs_diff, audio_spectral_similarity, audio_waveform_correlation, audio_rms_db_diff)"
				}),
			},
			{
				ID:          "T2V.defaults-1",
				Server:      "sglang",
				Lane:        "base",
				Modality:    VideoAudio,
				Repeat:      1,
				Concurrency: 1,
				NumGPUs:     1,
				Line:        56,
				Request: Request{
					Size:           "1280x720",
					Width:          1280,
					Height:         720,
					N:              1,
					Seconds:        2,
					FPS:            8,
					NumFrames:      16,
					InputReference: filepath.Join(dir, "inputs/ref.png"),
				},
			},
			{
				ID:          "minimal",
				Server:      "healthy",
				Lane:        "base",
				Modality:    Image,
				Repeat:      1,
				Concurrency: 1,
				NumGPUs:     1,
				Line:        65,
				Request:     Request{Size: "64x64", Width: 64, Height: 64, N: 1, OutputFormat: "png"},
			},
		},
	}
	// The suite's repeat_thresholds reach the cases that set none.
	want.RepeatLimits = repeatLimits(func(l *checks.RepeatLimits) {
		l.SSIM, l.DurationDiffS = 0.995, 0.02
		l.Origin = "full.yaml repeat_thresholds (ssim, audio_duration_diff), built-in repeat defaults (psnr, mean_abs_diff, audio_spectral_similarity, " +
			"audio_waveform_correlation, audio_rms_db_diff)"
	})
	for _, c := range want.Cases[1:] {
		c.RepeatLimits = want.RepeatLimits
	}
	// full.yaml sets no confirm: every level has the default (TestNoise covers the rest).
	want.Noise = Noise{OnUnconfirmed: OnUnconfirmedFail}
	for _, s := range want.Servers {
		s.Noise = want.Noise
	}
	for _, c := range want.Cases {
		c.Noise = want.Noise
	}
	got, err := Load("testdata/full.yaml")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Load mismatch (-want +got):\n%s", diff)
	}
}

// TestParseAnchors checks that anchors, aliases and merge keys, YAML's own way of not
// repeating a request, work, and that keys written beside a merge win.
func TestParseAnchors(t *testing.T) {
	s, err := Parse("suite.yaml", []byte(`
servers:
  ref: {builtin: {}}
cases:
  - &base {id: a, server: ref, modality: image, request: &req {prompt: fox, size: 64x64, steps: 4}}
  - <<: *base
    id: b
    request: {<<: *req, steps: 8}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Request{}
	for _, c := range s.Cases {
		got[c.ID] = c.Request
	}
	want := map[string]Request{
		"a": {Prompt: "fox", Size: "64x64", Width: 64, Height: 64, Steps: 4, N: 1, OutputFormat: "png"},
		"b": {Prompt: "fox", Size: "64x64", Width: 64, Height: 64, Steps: 8, N: 1, OutputFormat: "png"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// TestParseLargePlainSuiteIsNoAliasBomb loads a suite of 5,000 cases written out in full
// (over 150,000 nodes as written, more than the alias bound), one of them sharing another's
// request through an alias: only what aliases add counts against the bound, so it loads.
func TestParseLargePlainSuiteIsNoAliasBomb(t *testing.T) {
	const n = 5000
	var b strings.Builder
	b.WriteString("servers:\n  ref: {builtin: {}}\ncases:\n")
	b.WriteString("  - {id: first, server: ref, modality: image, request: &req {prompt: fox, size: 64x64, steps: 4}}\n")
	for i := range n - 2 {
		fmt.Fprintf(
			&b,
			"  - {id: case-%d, server: ref, modality: image, repeat: 2, estimate: 10s, request: {prompt: p%d, size: 64x64, steps: 4, seed: %d, "+
				"guidance_scale: 1.5, output_format: png}}\n",
			i,
			i,
			i,
		)
	}
	b.WriteString("  - {id: shared, server: ref, modality: image, request: *req}\n")
	s, err := Parse("suite.yaml", []byte(b.String()))
	if err != nil {
		t.Fatalf("a suite of %d plain cases: %v", n, err)
	}
	if len(s.Cases) != n {
		t.Errorf("loaded %d cases, want %d", len(s.Cases), n)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		data string
		want []string
	}{
		{"empty", "", []string{
			"suite.yaml:1: empty file; want a mapping with name, servers and cases",
		}},
		{"only comments", "# nothing yet\n", []string{
			"suite.yaml:1: empty file; want a mapping with name, servers and cases",
		}},
		{"syntax", "name: x\ncases:\n  - id: a\n   server: b\n", []string{
			// yaml.v3 names the line where the broken block starts.
			"suite.yaml:3: invalid YAML: did not find expected '-' indicator",
		}},
		{"syntax in a scalar", "name: x\ncases:\n  - id: a\n    server: \"b\n", []string{
			"suite.yaml:4: invalid YAML: found unexpected end of stream",
		}},
		{"syntax at the end", "name: x\ncases: [\n", []string{
			"suite.yaml:3: invalid YAML: did not find expected node content",
		}},
		{"syntax parser", "name: x\n- a\n", []string{
			"suite.yaml:2: invalid YAML: did not find expected key",
		}},
		{"syntax on line 1", "name: x: y\n", []string{
			"suite.yaml:1: invalid YAML: mapping values are not allowed in this context",
		}},
		{"unknown anchor", "name: x\n\ncases: *nope\n", []string{
			"suite.yaml:3: invalid YAML: unknown anchor 'nope' referenced",
		}},
		{"top level list", "- a\n- b\n", []string{
			"suite.yaml:1: want a mapping with name, servers and cases at the top level, got a list",
		}},
		{"two documents", "name: x\n---\nname: y\n", []string{
			"suite.yaml:2: a second YAML document; a suite file holds one",
		}},
		{"no cases key", "name: x\n", []string{
			"suite.yaml:1: cases: missing",
		}},
		{"no cases", "servers: {}\ncases: []\n", []string{
			"suite.yaml:2: cases: no cases; a suite needs at least one",
		}},
		{"alias cycle", "name: x\ncases: &c [*c]\n", []string{
			"suite.yaml:1: an alias refers to a node that contains it",
		}},
		{"alias bomb", `name: x
a: &a [x, x, x, x, x, x, x, x, x, x]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
`, []string{
			"suite.yaml:1: the file's aliases expand to more than 100000 YAML nodes",
		}},
		{"unknown and duplicate keys", `name: x
nmae: y
name: z
servers:
  ref: {builtin: {}, reuse: true, reuse: false}
cases:
  - {id: a, server: ref, modality: image, request: {size: 8x8, sizes: 9x9}}
`, []string{
			`suite.yaml:2: unknown key "nmae" (allowed: name, gpu, baselines, thresholds, ground_truth, known_failures, quality_thresholds, repeat_thresholds, ` +
				`validation_threads, servers, cases, confirm, on_unconfirmed, retry)`,
			"suite.yaml:3: name: duplicate key, first at line 1",
			"suite.yaml:5: servers.ref.reuse: duplicate key, first at line 5",
			`suite.yaml:7: cases[0].request: unknown key "sizes" (allowed: prompt, negative_prompt, size, seed, steps, guidance_scale, output_format, n, ` +
				`seconds, fps, num_frames, input_reference, images, extra)`,
		}},
		{"wrong types", `name: {a: b}
servers:
  ref:
    command: sglang serve --port {port}
    env: [A=1]
    reuse: "true"
    start_timeout: 5
cases:
  - id: a
    server: ref
    modality: image
    repeat: two
    concurrency: 1.5
    request: {size: 8x8, seed: "7", guidance_scale: high, images: img.png}
    checks: {perf: yes}
`, []string{
			"suite.yaml:1: name: want a string, got a mapping",
			`suite.yaml:4: servers.ref.command: want a list, got "sglang serve --port {port}"`,
			"suite.yaml:5: servers.ref.env: want a mapping, got a list",
			`suite.yaml:6: servers.ref.reuse: want true or false, got "true"`,
			`suite.yaml:7: servers.ref.start_timeout: want a duration such as "90s" or "10m", got "5"`,
			`suite.yaml:12: cases[0].repeat: want an integer, got "two"`,
			`suite.yaml:13: cases[0].concurrency: want an integer, got "1.5"`,
			`suite.yaml:14: cases[0].request.seed: want an integer, got "7"`,
			`suite.yaml:14: cases[0].request.guidance_scale: want a number, got "high"`,
			`suite.yaml:14: cases[0].request.images: want a list, got "img.png"`,
			`suite.yaml:15: cases[0].checks.perf: want true or false, got "yes"`,
		}},
		{"ids", `servers: {ref: {builtin: {}}}
cases:
  - {id: a, server: ref, modality: image, request: {size: 8x8}}
  - {id: a/b, server: ref, modality: image, request: {size: 8x8}}
  - {id: .hidden, server: ref, modality: image, request: {size: 8x8}}
  - {id: A, server: ref, modality: image, request: {size: 8x8}}
  - server: ref
    modality: image
    request: {size: 8x8}
  - id: a
    modality: image
    request: {size: 8x8}
`, []string{
			`suite.yaml:4: cases[1].id: must match [A-Za-z0-9][A-Za-z0-9_.-]*, got "a/b"; ids become folder names`,
			`suite.yaml:5: cases[2].id: must match [A-Za-z0-9][A-Za-z0-9_.-]*, got ".hidden"; ids become folder names`,
			`suite.yaml:6: cases[3].id: id "A" differs from "a" (line 3) only in letter case; ids become folder names`,
			"suite.yaml:7: cases[4].id: missing",
			"suite.yaml:10: cases[5].server: missing",
			`suite.yaml:10: cases[5].id: duplicate id "a", first at line 3`,
		}},
		{"numbers", `validation_threads: 0
servers: {ref: {builtin: {}}}
cases:
  - id: a
    server: ref
    modality: video
    repeat: 2
    concurrency: 3
    num_gpus: 0
    request: {size: 8x8, steps: -1, seconds: -0.5, fps: -8, num_frames: -1}
  - id: b
    server: ref
    modality: image
    concurrency: 0
    request: {size: 8x8, n: -2, guidance_scale: .nan}
`, []string{
			"suite.yaml:1: validation_threads: must be ≥ 1, got 0",
			"suite.yaml:8: cases[0].concurrency: must be ≤ repeat (2), got 3",
			"suite.yaml:9: cases[0].num_gpus: must be ≥ 1, got 0",
			"suite.yaml:10: cases[0].request.steps: must not be negative, got -1",
			"suite.yaml:10: cases[0].request.seconds: must not be negative, got -0.5",
			"suite.yaml:10: cases[0].request.fps: must not be negative, got -8",
			"suite.yaml:10: cases[0].request.num_frames: must not be negative, got -1",
			"suite.yaml:14: cases[1].concurrency: must be ≥ 1, got 0",
			`suite.yaml:15: cases[1].request.guidance_scale: must be a finite number, got ".nan"`,
			"suite.yaml:15: cases[1].request.n: must be ≥ 1, got -2",
		}},
		{"sizes and formats", `servers: {ref: {builtin: {}}}
cases:
  - {id: a, server: ref, modality: image, request: {size: 0x8}}
  - {id: b, server: ref, modality: image, request: {size: 1280×720}}
  - {id: c, server: ref, modality: image, request: {size: 8x8x8}}
  - {id: d, server: ref, modality: image, request: {size: " 8x8"}}
  - {id: e, server: ref, modality: image, request: {prompt: fox}}
  - {id: f, server: ref, modality: image}
  - {id: g, server: ref, modality: image, request: {size: 8x8, output_format: jpg}}
  - {id: h, server: ref, modality: audio, request: {size: 8x8}}
  - {id: i, server: ref, request: {size: 8x8}}
`, []string{
			`suite.yaml:3: cases[0].request.size: want WIDTHxHEIGHT with positive integers, such as "1280x720", got "0x8"`,
			`suite.yaml:4: cases[1].request.size: want WIDTHxHEIGHT with positive integers, such as "1280x720", got "1280×720"`,
			`suite.yaml:5: cases[2].request.size: want WIDTHxHEIGHT with positive integers, such as "1280x720", got "8x8x8"`,
			`suite.yaml:6: cases[3].request.size: want WIDTHxHEIGHT with positive integers, such as "1280x720", got " 8x8"`,
			"suite.yaml:8: cases[5].request: missing",
			`suite.yaml:9: cases[6].request.output_format: unknown output format "jpg" (known: png, jpeg, webp)`,
			`suite.yaml:10: cases[7].modality: unknown modality "audio" (known: image, video, video+audio, text)`,
			"suite.yaml:11: cases[8].modality: missing",
		}},
		{"modality fields", `servers: {ref: {builtin: {}}}
cases:
  - id: img
    server: ref
    modality: image
    request:
      size: 8x8
      seconds: 2
      fps: 8
      num_frames: 16
      input_reference: testdata/inputs/ref.png
  - id: vid
    server: ref
    modality: video+audio
    request:
      size: 8x8
      images: [testdata/inputs/edit.png]
      output_format: png
      n: 1
`, []string{
			"suite.yaml:8: cases[0].request.seconds: applies to video cases only; this case's modality is image",
			"suite.yaml:9: cases[0].request.fps: applies to video cases only; this case's modality is image",
			"suite.yaml:10: cases[0].request.num_frames: applies to video cases only; this case's modality is image",
			"suite.yaml:11: cases[0].request.input_reference: applies to video cases only; this case's modality is image",
			"suite.yaml:17: cases[1].request.images: applies to image (edit) cases only; this case's modality is video+audio",
			"suite.yaml:18: cases[1].request.output_format: applies to image cases only; this case's modality is video+audio",
			"suite.yaml:19: cases[1].request.n: applies to image cases only; this case's modality is video+audio",
		}},
		{"input files", `servers: {ref: {builtin: {}}}
cases:
  - {id: a, server: ref, modality: image, request: {size: 8x8, images: [testdata/inputs/edit.png, nope.png, testdata]}}
  - {id: b, server: ref, modality: video, request: {size: 8x8, input_reference: /nonexistent/ref.png}}
`, []string{
			"suite.yaml:3: cases[0].request.images[1]: no such file: " + abs(t, "nope.png"),
			"suite.yaml:3: cases[0].request.images[2]: is a folder, want a file: " + abs(t, "testdata"),
			"suite.yaml:4: cases[1].request.input_reference: no such file: /nonexistent/ref.png",
		}},
		{"servers", `servers:
  both: {builtin: {}, command: [x, "{port}"]}
  neither: {model: m}
  noport: {command: [sglang, serve, --port, "30000"], env: {PORT: "8000"}}
  envport: {command: [server], env: {PORT: "{port}"}}
  empty: {command: []}
  nullcmd: {command: }
  perflog: {command: [x, "{port}"], env: {SGLANG_PERF_LOG_DIR: /tmp}}
  health: {builtin: {}, ready: {health: health}}
  blind: {builtin: {}, ready: {log: "", health: "-"}}
  timeouts: {builtin: {}, request_timeout: 0s, stop_grace: -1s, poll_interval: 1 minute}
  faults: {builtin: {faults: [explode, crash-at=0, slow-after=2, no-perf-record=1, hang-at=3], step_ms: -2, perf_lag: -1s, timing: wallclock}}
  notmap: [x]
  "-lead": {builtin: {}}
cases:
  - {id: a, server: missing, modality: image, request: {size: 8x8}}
`, []string{
			"suite.yaml:2: servers.both: both builtin and command; a server is one or the other",
			"suite.yaml:3: servers.neither: neither builtin nor command; give the command line of the server, or builtin: {} for the reference server",
			`suite.yaml:4: servers.noport.command: no "{port}" in any argument or env value; diffusion-check picks the port and must pass it to the server`,
			"suite.yaml:6: servers.empty.command: want a program and its arguments, got an empty command",
			"suite.yaml:7: servers.nullcmd: neither builtin nor command; give the command line of the server, or builtin: {} for the reference server",
			"suite.yaml:8: servers.perflog.env.SGLANG_PERF_LOG_DIR: set by diffusion-check for every server it starts, to find the performance log",
			`suite.yaml:9: servers.health.ready.health: want a path starting with "/", or "-" for none, got "health"`,
			`suite.yaml:10: servers.blind.ready: no way to tell that the server is ready: log is empty and health is "-"`,
			"suite.yaml:11: servers.timeouts.stop_grace: must not be negative, got -1s",
			"suite.yaml:11: servers.timeouts.request_timeout: must be > 0, got 0s",
			`suite.yaml:11: servers.timeouts.poll_interval: want a duration such as "90s" or "10m", got "1 minute"`,
			`suite.yaml:12: servers.faults.builtin.faults[0]: unknown fault "explode" (known: ` + knownFaults + `)`,
			`suite.yaml:12: servers.faults.builtin.faults[1]: fault "crash-at=0": want crash-at=K with a request number K ≥ 1`,
			`suite.yaml:12: servers.faults.builtin.faults[2]: fault "slow-after=2": want slow-after=K:FACTOR with K ≥ 1 and FACTOR > 0`,
			`suite.yaml:12: servers.faults.builtin.faults[3]: fault "no-perf-record=1": no-perf-record takes no value`,
			"suite.yaml:12: servers.faults.builtin.step_ms: must not be negative, got -2",
			"suite.yaml:12: servers.faults.builtin.perf_lag: must not be negative, got -1s",
			`suite.yaml:12: servers.faults.builtin.timing: want measured or computed, got "wallclock"`,
			"suite.yaml:13: servers.notmap: want a mapping, got a list",
			`suite.yaml:14: servers.-lead: server name must match [A-Za-z0-9][A-Za-z0-9_.-]*, got "-lead"; it becomes part of folder names`,
			`suite.yaml:16: cases[0].server: unknown server "missing" (declared: -lead, blind, both, empty, envport, faults, health, neither, noport, ` +
				`notmap, nullcmd, perflog, timeouts)`,
		}},
		{"no servers", `cases:
  - {id: a, server: ref, modality: image, request: {size: 8x8}}
`, []string{
			`suite.yaml:2: cases[0].server: unknown server "ref" (declared: none)`,
		}},
		{"extra", `servers: {ref: {builtin: {}}}
cases:
  - {id: a, server: ref, modality: image, request: {size: 8x8, extra: [x]}}
  - id: b
    server: ref
    modality: image
    request:
      size: 8x8
      extra:
        ok: 1
        bad: .inf
        nested: {[x]: y}
`, []string{
			"suite.yaml:3: cases[0].request.extra: want a mapping of extra request fields, got a list",
			`suite.yaml:11: cases[1].request.extra.bad: must be a finite number, got ".inf"`,
			"suite.yaml:12: cases[1].request.extra.nested: keys must be strings, got a list",
		}},
		{"paths", `servers:
  ref: {builtin: {}, paths: ["!a/**"]}
cases:
  - id: a
    server: ref
    modality: image
    request: {size: 8x8}
    paths:
      - "/abs/**"
      - "src/[a-"
      - "./src/**"
      - "src/../x"
      - "docs/"
      - ""
      - "!"
      - ok/**
  - {id: b, server: ref, modality: image, request: {size: 8x8}, paths: src/**}
`, []string{
			`suite.yaml:2: servers.ref.paths: only negations ("!..."): they can take paths out, but nothing puts any in; add the globs that select`,
			`suite.yaml:9: cases[0].paths[0]: "/abs/**": globs are relative to the repository root already; drop the leading "/"`,
			`suite.yaml:10: cases[0].paths[1]: "src/[a-": not a valid glob (an unclosed [ or {, or a trailing \)`,
			`suite.yaml:11: cases[0].paths[2]: "./src/**": repository paths have no "." or ".." parts; write the path from the repository root`,
			`suite.yaml:12: cases[0].paths[3]: "src/../x": repository paths have no "." or ".." parts; write the path from the repository root`,
			`suite.yaml:13: cases[0].paths[4]: "docs/": a changed path is a file; write "docs/**" for everything under the folder`,
			"suite.yaml:14: cases[0].paths[5]: empty glob",
			"suite.yaml:15: cases[0].paths[6]: empty glob",
			`suite.yaml:17: cases[1].paths: want a list, got "src/**"`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("suite.yaml", []byte(tt.data))
			if s != nil {
				t.Errorf("Parse returned a suite along with the error")
			}
			if diff := cmp.Diff(tt.want, errLines(err)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLoadManyMistakes checks that one run reports every problem of a file, each at its line.
func TestLoadManyMistakes(t *testing.T) {
	_, err := Load("testdata/mistakes.yaml")
	f := "testdata/mistakes.yaml"
	want := []string{
		f + `:1: name: want a string, got a list`,
		f + `:3: unknown key "colour" (allowed: name, gpu, baselines, thresholds, ground_truth, known_failures, quality_thresholds, ` +
			`repeat_thresholds, validation_threads, servers, cases, confirm, on_unconfirmed, retry)`,
		f + `:7: servers.ref.builtin.faults[1]: unknown fault "explode" (known: ` + knownFaults + `)`,
		f + `:7: servers.ref.builtin.faults[2]: fault "crash-at=0": want crash-at=K with a request number K ≥ 1`,
		f + `:8: servers.ref.builtin.step_ms: must not be negative, got -1`,
		f + `:9: servers.ref: both builtin and command; a server is one or the other`,
		f + `:11: servers.sglang.command: no "{port}" in any argument or env value; diffusion-check picks the port and must pass it to the server`,
		f + `:12: servers.sglang.ready.health: want a path starting with "/", or "-" for none, got "health"`,
		f + `:13: servers.sglang.start_timeout: want a duration such as "90s" or "10m", got "10"`,
		f + `:14: servers.sglang.stop_grace: must not be negative, got -1s`,
		f + `:15: servers.empty: neither builtin nor command; give the command line of the server, or builtin: {} for the reference server`,
		f + `:16: servers.bad name: server name must match [A-Za-z0-9][A-Za-z0-9_.-]*, got "bad name"; it becomes part of folder names`,
		f + `:21: cases[0].repeat: must be ≥ 1, got 0`,
		// No "concurrency: must be ≤ repeat" for line 22: repeat itself is wrong.
		f + `:23: cases[0].request.output_format: unknown output format "gif" (known: png, jpeg, webp)`,
		f + `:23: cases[0].request.fps: applies to video cases only; this case's modality is image`,
		f + `:24: cases[1].id: duplicate id "t2i", first at line 18`,
		f + `:26: cases[1].modality: unknown modality "audio" (known: image, video, video+audio, text)`,
		f + `:27: cases[1].repeat: want an integer, got "two"`,
		f + `:29: cases[1].request.size: want WIDTHxHEIGHT with positive integers, such as "1280x720", got "256x"`,
		f + `:30: cases[1].request.steps: must not be negative, got -3`,
		f + `:31: cases[1].request.n: must be ≥ 1, got 0`,
		f + `:32: cases[1].request.images[0]: no such file: ` + abs(t, "testdata/inputs/missing.png"),
		f + `:33: cases[1].request.input_reference: is a folder, want a file: ` + abs(t, "testdata/inputs"),
		f + `:34: cases[2].id: must match [A-Za-z0-9][A-Za-z0-9_.-]*, got "../escape"; ids become folder names`,
		f + `:35: cases[2].server: unknown server "nowhere" (declared: bad name, empty, ref, sglang)`,
		f + `:37: cases[2].concurrency: must be ≤ repeat (2), got 3`,
		f + `:39: cases[2].num_gpus: must be ≥ 1, got -1`,
		f + `:40: cases[2].estimate: must not be negative, got -5s`,
		f + `:41: cases[2].timeout: want a duration such as "90s" or "10m", got "soon"`,
		f + `:44: cases[2].request.images: applies to image (edit) cases only; this case's modality is video`,
		f + `:45: cases[2].request.n: applies to image cases only; this case's modality is video`,
		f + `:46: cases[2].request.seconds: must not be negative, got -2`,
		f + `:47: cases[2].request.extra: want a mapping of extra request fields, got a list`,
		f + `:48: cases[2].checks: unknown key "speed" (allowed: perf, memory, consistency, audio, perf_record, output, ground_truth_required, repeat, ` +
			`models_api, t2v_input_reference)`,
		f + `:48: cases[2].checks.perf: want true or false, got "yes"`,
		f + `:50: cases[3].id: id "T2I" differs from "t2i" (line 18) only in letter case; ids become folder names`,
		f + `:52: cases[3].request.seed: want an integer, got "1.5"`,
		f + `:54: cases[3].repeat: duplicate key, first at line 53`,
		f + `:55: cases[4].id: missing`,
		f + `:55: cases[4].server: missing`,
		f + `:55: cases[4].modality: missing`,
		f + `:55: cases[4].request: missing`,
	}
	if diff := cmp.Diff(want, errLines(err)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func TestLoadErrorValues(t *testing.T) {
	_, err := Load("testdata/does-not-exist.yaml")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load of a missing file: got %v, want fs.ErrNotExist", err)
	}

	_, err = Parse("s.yaml", []byte("servers: {ref: {builtin: {}}}\ncases:\n  - {id: a, server: ref, modality: image, repeat: 0, request: {size: 8x8}}\n"))
	var e *strictdecode.Error
	if !errors.As(err, &e) {
		t.Fatalf("errors.As(%v, *strictdecode.Error) failed", err)
	}
	want := &strictdecode.Error{File: "s.yaml", Line: 3, Field: "cases[0].repeat", Msg: "must be ≥ 1, got 0"}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("*strictdecode.Error (-want +got):\n%s", diff)
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"full.yaml", "mistakes.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("servers: {ref: {builtin: {}}}\ncases: [{id: a, server: ref, modality: image, request: {size: 8x8}}]\n"))
	f.Add(
		[]byte(
			"cases:\n  - &c {id: a, server: ref, modality: video, repeat: 2, concurrency: 2, request: {size: 8x8}}\n  - {<<: *c, id: b}\n" +
				"servers: {ref: {command: [x, '{port}']}}\n",
		),
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("testdata/fuzz.yaml", data)
		if err != nil {
			if s != nil {
				t.Fatal("suite returned along with an error")
			}
			for _, line := range errLines(err) {
				if !strings.HasPrefix(line, "testdata/fuzz.yaml:") {
					t.Fatalf("error line without the file name: %q", line)
				}
			}
			return
		}
		if len(s.Cases) == 0 {
			t.Fatal("valid suite without cases")
		}
		ids := map[string]bool{}
		for _, c := range s.Cases {
			if !validName(c.ID) || ids[strings.ToLower(c.ID)] {
				t.Fatalf("bad or duplicate id %q", c.ID)
			}
			ids[strings.ToLower(c.ID)] = true
			srv := s.Servers[c.Server]
			switch {
			case srv == nil:
				t.Fatalf("case %s: server %q does not exist", c.ID, c.Server)
			case (srv.Builtin == nil) == (len(srv.Command) == 0):
				t.Fatalf("server %s: want exactly one of builtin and command", srv.Name)
			case c.Repeat < 1 || c.Concurrency < 1 || c.Concurrency > c.Repeat:
				t.Fatalf("case %s: repeat %d, concurrency %d", c.ID, c.Repeat, c.Concurrency)
			case c.Request.Width < 1 || c.Request.Height < 1:
				t.Fatalf("case %s: size %dx%d", c.ID, c.Request.Width, c.Request.Height)
			case c.Lane == "" || c.NumGPUs < 1 || c.Request.N < 1:
				t.Fatalf("case %s: lane %q, num_gpus %d, n %d", c.ID, c.Lane, c.NumGPUs, c.Request.N)
			case c.Modality != Image && c.Modality != Video && c.Modality != VideoAudio:
				t.Fatalf("case %s: modality %q", c.ID, c.Modality)
			}
		}
	})
}

// repeatLimits is the built-in repeat thresholds changed by edit.
func repeatLimits(edit func(*checks.RepeatLimits)) checks.RepeatLimits {
	l := checks.DefaultRepeatLimits()
	edit(&l)
	return l
}
