package checks

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/diffusion-check/diffusion-check/results"
)

// chunks makes chunk stats whose chunk_total_ms are totals, scheduler_forward_ms a tenth of
// them, two frames and 1 MiB of payload each.
func chunks(totals ...float64) []results.ChunkStats {
	out := make([]results.ChunkStats, len(totals))
	for i, t := range totals {
		out[i] = results.ChunkStats{Index: i, RequestID: "", NumFrames: 2, WSPayloadBytes: 1 << 20, ChunkTotalMs: t, SchedulerForwardMs: t / 10}
	}
	return out
}

// TestSummarizeRealtimeMatchesSGLang checks the summary against values computed by hand with
// SGLang's summarize_realtime_perf_stats (realtime_consistency.py, triple-mu/sglang
// 2026-06-02): p95 index min(n−1, int(n·0.95)) of the sorted guarded values, fmean, max, and
// the counts over every chunk.
func TestSummarizeRealtimeMatchesSGLang(t *testing.T) {
	// 21 guarded chunks: int(21·0.95) = 19, so p95 is the second largest, not the largest.
	guarded := make([]float64, 21)
	for i := range guarded {
		guarded[i] = float64(i + 1) // 1..21, shuffled below
	}
	guarded[0], guarded[20] = guarded[20], guarded[0]
	tests := []struct {
		name   string
		stats  []results.ChunkStats
		ignore int
		want   map[string]float64 // the keys compared
	}{
		{name: "one chunk: p95 index min(0, int(0.95)) = 0", stats: chunks(7), want: map[string]float64{
			"p95_chunk_total_ms": 7, "avg_chunk_total_ms": 7, "max_chunk_total_ms": 7, "num_chunks": 1, "guarded_chunks": 1, "total_frames": 2}},
		{name: "20 chunks: int(19.0) = 19 is the largest", stats: chunks(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20),
			want: map[string]float64{"p95_chunk_total_ms": 20, "max_chunk_total_ms": 20, "avg_chunk_total_ms": 10.5}},
		{name: "21 chunks: int(19.95) = 19 is the second largest", stats: chunks(guarded...),
			want: map[string]float64{"p95_chunk_total_ms": 20, "max_chunk_total_ms": 21, "avg_chunk_total_ms": 11}},
		{name: "ignored chunks are out of the series, in the counts and their own maxima", stats: chunks(9000, 8000, 100, 300), ignore: 2,
			want: map[string]float64{"avg_chunk_total_ms": 200, "p95_chunk_total_ms": 300, "max_chunk_total_ms": 300,
				"ignored_max_chunk_total_ms": 9000, "ignored_max_scheduler_forward_ms": 900, "num_chunks": 4, "guarded_chunks": 2,
				"ignored_initial_chunks": 2, "total_frames": 8, "avg_ws_payload_mb": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sum, err := summarizeRealtime(tt.stats, tt.ignore)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]float64{}
			for k := range tt.want {
				v, ok := sum[k]
				if !ok {
					v = math.NaN()
				}
				got[k] = v
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("summary (-want +got):\n%s", d)
			}
		})
	}
}

// TestSummarizeRealtimeKeysAreTheKnownMetrics proves RealtimeMetrics (the load-time list) is
// exactly what a summary with ignored chunks holds, and that without ignored chunks the two
// ignored_max_* metrics are absent, as in SGLang.
func TestSummarizeRealtimeKeysAreTheKnownMetrics(t *testing.T) {
	sum, err := summarizeRealtime(chunks(1, 2, 3), 1)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range sum {
		keys = append(keys, k)
	}
	if d := cmp.Diff(RealtimeMetrics(), keys, cmpopts.SortSlices(func(a, b string) bool { return a < b })); d != "" {
		t.Errorf("summary keys (-RealtimeMetrics +summary):\n%s", d)
	}
	sum, _ = summarizeRealtime(chunks(1, 2, 3), 0)
	for _, k := range []string{"ignored_max_chunk_total_ms", "ignored_max_scheduler_forward_ms"} {
		if _, ok := sum[k]; ok {
			t.Errorf("%s present without ignored chunks", k)
		}
		if RealtimeMetricProblem(k, 0) == "" || RealtimeMetricProblem(k, 1) != "" {
			t.Errorf("RealtimeMetricProblem(%s): want a problem only when nothing is ignored", k)
		}
	}
}

// TestRealtimeVerdictBoundaries is validate_realtime_perf_stats (realtime_consistency.py,
// triple-mu/sglang 2026-06-02) at each boundary: actual > threshold fails, equal passes; an
// unknown metric is an error; no stats fails; an ignore leaving nothing to guard fails; no
// thresholds makes no check.
func TestRealtimeVerdictBoundaries(t *testing.T) {
	type got struct {
		Name   string
		Status results.Status
	}
	tests := []struct {
		name       string
		stats      []results.ChunkStats
		ignore     int
		thresholds map[string]float64
		want       []got
	}{
		{name: "equal to the threshold passes", stats: chunks(100, 200), thresholds: map[string]float64{"p95_chunk_total_ms": 200},
			want: []got{{"perf.realtime.p95_chunk_total_ms", results.Pass}}},
		{name: "just above the threshold fails", stats: chunks(100, 200.01), thresholds: map[string]float64{"p95_chunk_total_ms": 200},
			want: []got{{"perf.realtime.p95_chunk_total_ms", results.Fail}}},
		{name: "a slow ignored chunk does not fail", stats: chunks(90000, 100, 100), ignore: 1, thresholds: map[string]float64{"max_chunk_total_ms": 100},
			want: []got{{"perf.realtime.max_chunk_total_ms", results.Pass}}},
		{name: "the first guarded chunk counts", stats: chunks(100, 90000, 100), ignore: 1, thresholds: map[string]float64{"max_chunk_total_ms": 100},
			want: []got{{"perf.realtime.max_chunk_total_ms", results.Fail}}},
		{name: "unknown metric is an error, the others judged", stats: chunks(1), thresholds: map[string]float64{"p99_chunk_total_ms": 1,
			"avg_chunk_total_ms": 1},
			want: []got{{"perf.realtime.avg_chunk_total_ms", results.Pass}, {"perf.realtime.p99_chunk_total_ms", results.Error}}},
		{name: "ignored metric without ignored chunks is an error", stats: chunks(1), thresholds: map[string]float64{"ignored_max_chunk_total_ms": 1},
			want: []got{{"perf.realtime.ignored_max_chunk_total_ms", results.Error}}},
		{name: "no chunk stats fails", thresholds: map[string]float64{"p95_chunk_total_ms": 1}, want: []got{{PerfRealtime, results.Fail}}},
		{name: "ignore leaving nothing to guard fails", stats: chunks(1, 2), ignore: 2, thresholds: map[string]float64{"p95_chunk_total_ms": 1},
			want: []got{{PerfRealtime, results.Fail}}},
		{name: "no thresholds makes no check", stats: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var gots []got
			for _, c := range Realtime(tt.stats, tt.ignore, tt.thresholds) {
				gots = append(gots, got{c.Name, c.Status})
			}
			if d := cmp.Diff(tt.want, gots); d != "" {
				t.Errorf("checks (-want +got):\n%s", d)
			}
		})
	}
}

// TestRealtimeRecordIDIsTheLastChunkNamingOne is SGLang's choice of the record that carries
// the session's VRAM (_validate_realtime_performance, test_server_common.py, 2026-08-20):
// the last chunk with a request id.
func TestRealtimeRecordIDIsTheLastChunkNamingOne(t *testing.T) {
	tests := []struct {
		ids  []string
		want string
	}{
		{[]string{"a", "b", "c"}, "c"},
		{[]string{"a", "b", ""}, "b"},
		{[]string{"", ""}, ""},
		{nil, ""},
	}
	for _, tt := range tests {
		stats := make([]results.ChunkStats, len(tt.ids))
		for i, id := range tt.ids {
			stats[i].RequestID = id
		}
		if got := RealtimeRecordID(stats); got != tt.want {
			t.Errorf("RealtimeRecordID(%q) = %q, want %q", tt.ids, got, tt.want)
		}
	}
}

// Rule: a realtime session's perf.e2e runs from the init message to the last chunk's stats
// (SGLang PR #39206: "Realtime E2E covers the requested generation session, not only its
// final chunk"), against expected_e2e_ms with the E2E tolerance and 20 ms pad (reading); no
// stats is a missing E2E.
func TestRealtimeE2ERule(t *testing.T) {
	b := PerfBaseline{E2EMs: 4000, Tol: PerfTolerances{E2E: 0.25}}
	limit := PerfLimit(4000, 0.25, E2EPadMs)
	chunks := func(last float64) []results.ChunkStats {
		return []results.ChunkStats{{Index: 0, SessionMs: 100, ChunkTotalMs: 90}, {Index: 1, SessionMs: last, ChunkTotalMs: 90}}
	}
	for _, tt := range []struct {
		name   string
		got    []results.Check
		status results.Status
		detail string
	}{
		{"at the limit", RealtimeE2E(chunks(limit), b), results.Pass, "realtime session"},
		{"one ulp over", RealtimeE2E(chunks(math.Nextafter(limit, math.Inf(1))), b), results.Fail, "> limit"},
		{"the last chunk counts, not the first", RealtimeE2E(chunks(6000), b), results.Fail, "6000"},
		{"no stats", RealtimeE2E(nil, b), results.Fail, "E2E duration missing"},
		{"no baseline value", RealtimeE2E(chunks(100), PerfBaseline{E2EMs: math.NaN()}), results.Fail, "no baseline value"},
		{"AMD warns", RealtimeE2E(chunks(6000), PerfBaseline{E2EMs: 4000, ROCm: true}), results.Pass, ""},
	} {
		if len(tt.got) != 1 || tt.got[0].Name != PerfE2E || tt.got[0].Status != tt.status || !strings.Contains(tt.got[0].Detail, tt.detail) {
			t.Errorf("%s: %+v, want %s with %q", tt.name, tt.got, tt.status, tt.detail)
		}
	}
}
