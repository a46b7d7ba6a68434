package suite

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const realtimeSuiteHead = `servers:
  ref: {builtin: {}}
cases:
  - id: rt
    server: ref
    modality: video
    request: {size: 8x8}
`

// TestRealtimeCaseIsRead: SGLang's realtime_num_chunks, realtime_perf_ignore_initial_chunks
// and realtime_perf_thresholds (testcase_configs.py, triple-mu/sglang 2026-08-20) as one
// mapping; SGLang's own lingbot_world_realtime_plastic_beach values.
func TestRealtimeCaseIsRead(t *testing.T) {
	data := realtimeSuiteHead + `    realtime:
      num_chunks: 4
      ignore_initial_chunks: 2
      thresholds: {p95_chunk_total_ms: 5000, p95_scheduler_forward_ms: 4500.0, p95_ws_payload_mb: 16}
`
	s, err := Parse(filepath.Join(t.TempDir(), "suite.yaml"), []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	want := &Realtime{NumChunks: 4, IgnoreInitialChunks: 2,
		Thresholds: map[string]float64{"p95_chunk_total_ms": 5000, "p95_scheduler_forward_ms": 4500, "p95_ws_payload_mb": 16}}
	if d := cmp.Diff(want, s.Cases[0].Realtime); d != "" {
		t.Errorf("realtime (-want +got):\n%s", d)
	}
}

// TestRealtimeCaseErrorsNameFileAndLine: what SGLang raises only after the session ran
// (summarize_realtime_perf_stats: ignore must leave a chunk; validate_realtime_perf_stats:
// unknown metric) is refused at load, each naming suite.yaml:line.
func TestRealtimeCaseErrorsNameFileAndLine(t *testing.T) {
	tests := []struct {
		name, realtime string
		want           []string
	}{
		{name: "unknown metric", realtime: "{num_chunks: 2, thresholds: {p99_chunk_total_ms: 1}}",
			want: []string{
				`suite.yaml:8: cases[0].realtime.thresholds.p99_chunk_total_ms: unknown realtime perf metric "p99_chunk_total_ms"; available metrics: ` +
					`avg_chunk_total_ms, avg_raw_payload_build_ms, avg_raw_write_ms, avg_request_prepare_ms, avg_scheduler_forward_ms, avg_ws_payload_mb, ` +
					`avg_ws_write_ms, guarded_chunks, ignored_initial_chunks, ignored_max_chunk_total_ms, ignored_max_scheduler_forward_ms, max_chunk_total_ms, ` +
					`max_raw_payload_build_ms, max_raw_write_ms, max_request_prepare_ms, max_scheduler_forward_ms, max_ws_payload_mb, max_ws_write_ms, num_chunks, ` +
					`p95_chunk_total_ms, p95_raw_payload_build_ms, p95_raw_write_ms, p95_request_prepare_ms, p95_scheduler_forward_ms, p95_ws_payload_mb, ` +
					`p95_ws_write_ms, total_frames`,
			}},
		{name: "ignored metric without ignored chunks", realtime: "{num_chunks: 2, thresholds: {ignored_max_chunk_total_ms: 1}}",
			want: []string{
				`suite.yaml:8: cases[0].realtime.thresholds.ignored_max_chunk_total_ms: ` +
					`realtime perf metric "ignored_max_chunk_total_ms" exists only when ignore_initial_chunks > 0 (SGLang's summary holds it only then)`,
			}},
		{name: "ignore leaves no chunk", realtime: "{num_chunks: 2, ignore_initial_chunks: 2}",
			want: []string{`suite.yaml:8: cases[0].realtime.ignore_initial_chunks: must leave at least one of the 2 chunks to guard, got 2`}},
		{name: "no chunks", realtime: "{num_chunks: 0}",
			want: []string{`suite.yaml:8: cases[0].realtime.num_chunks: must be ≥ 1, got 0`}},
		{name: "chunk cap", realtime: "{num_chunks: 4097}",
			want: []string{`suite.yaml:8: cases[0].realtime.num_chunks: must be ≤ 4096, got 4097`}},
		{name: "num_chunks missing", realtime: "{thresholds: {}}",
			want: []string{`suite.yaml:8: cases[0].realtime.num_chunks: missing`}},
		{name: "threshold not a number", realtime: "{num_chunks: 1, thresholds: {max_chunk_total_ms: fast}}",
			want: []string{`suite.yaml:8: cases[0].realtime.thresholds.max_chunk_total_ms: want a number, got "fast"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("suite.yaml", []byte(realtimeSuiteHead+"    realtime: "+tt.realtime+"\n"))
			if d := cmp.Diff(tt.want, errLines(err)); d != "" {
				t.Errorf("errors (-want +got):\n%s", d)
			}
		})
	}
	t.Run("concurrent sessions", func(t *testing.T) {
		data := "servers:\n  ref: {builtin: {}}\ncases:\n" +
			"  - {id: rt, server: ref, modality: video, repeat: 2, concurrency: 2, request: {size: 8x8}, realtime: {num_chunks: 1}}\n"
		_, err := Parse("suite.yaml", []byte(data))
		want := []string{
			"suite.yaml:4: cases[0].concurrency: must be 1 for a realtime case, got 2: " +
				"SGLang serves one realtime session at a time and refuses a second (realtime_video_api.py)",
		}
		if d := cmp.Diff(want, errLines(err)); d != "" {
			t.Errorf("errors (-want +got):\n%s", d)
		}
	})
	t.Run("image modality", func(t *testing.T) {
		data := "servers:\n  ref: {builtin: {}}\ncases:\n  - {id: rt, server: ref, modality: image, request: {size: 8x8}, realtime: {num_chunks: 1}}\n"
		_, err := Parse("suite.yaml", []byte(data))
		want := []string{"suite.yaml:4: cases[0].realtime: realtime cases stream video frames: want modality video, got image"}
		if d := cmp.Diff(want, errLines(err)); d != "" {
			t.Errorf("errors (-want +got):\n%s", d)
		}
	})
}

// A realtime case's first frame may be an http(s) URL, sent as first_frame as SGLang's
// prepare_realtime_first_frame sends an image URL (realtime_consistency.py, pandalee99/sglang
// @ cce0a1244); any other case's input_reference or images may be one too, fetched when the
// case runs as SGLang's download_image_from_url fetches it; an edit image's file must exist.
func TestRealtimeFirstFrameURL(t *testing.T) {
	const url = "https://example.com/frames/first.png"
	withRef := func(realtime bool) string {
		s := `servers:
  ref: {builtin: {}}
cases:
  - id: rt
    server: ref
    modality: video
    request: {size: 8x8, input_reference: "` + url + `"}
`
		if realtime {
			s += "    realtime: {num_chunks: 2}\n"
		}
		return s
	}
	s, err := Parse(filepath.Join(t.TempDir(), "suite.yaml"), []byte(withRef(true)))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Cases[0].Request.InputReference; got != url {
		t.Errorf("input_reference %q, want the URL unchanged", got)
	}
	if s, err = Parse(filepath.Join(t.TempDir(), "suite.yaml"), []byte(withRef(false))); err != nil || s.Cases[0].Request.InputReference != url {
		t.Errorf("a URL in an image-to-video case: %v", err)
	}
	edit := `servers: {ref: {builtin: {}}}
cases:
  - {id: e, server: ref, modality: image, request: {size: 8x8, images: ["` + url + `", missing.png]}}
`
	_, err = Parse(filepath.Join(t.TempDir(), "suite.yaml"), []byte(edit))
	if err == nil || strings.Contains(err.Error(), "images[0]") || !strings.Contains(err.Error(), "images[1]") {
		t.Errorf("an edit's URL is taken, its missing file is not: %v", err)
	}
	for in, want := range map[string]bool{url: true, "http://127.0.0.1:8000/a.png": true, "ftp://x/a.png": false, "frames/a.png": false,
		"https://": false, "file:///etc/passwd": false} {
		if got := IsURL(in); got != want {
			t.Errorf("IsURL(%q) = %v, want %v", in, got, want)
		}
	}
}

// A realtime case takes no warm-up requests, as SGLang's DiffusionTestCase refuses them
// ("request warmup requires non-realtime metrics", web4hub/Sgl @ 4e66c7cc).
func TestRealtimeRefusesWarmup(t *testing.T) {
	const s = `servers: {ref: {builtin: {}}}
cases:
  - id: rt
    server: ref
    modality: video
    warmup: 1
    request: {size: 8x8}
    realtime: {num_chunks: 2}
`
	_, err := Parse(filepath.Join(t.TempDir(), "suite.yaml"), []byte(s))
	if err == nil || !strings.Contains(err.Error(), "suite.yaml:6: cases[0].warmup: a realtime case takes no warm-up requests") {
		t.Errorf("got %v", err)
	}
}
