package checks

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/diffusion-check/diffusion-check/results"
)

// Realtime check names. A realtime (streaming) case is judged on the per-chunk timings its
// server reports over the websocket session: one check per configured threshold, named
// PerfRealtimePrefix + SGLang's metric name (perf.realtime.p95_chunk_total_ms), and
// PerfRealtime when the session's stats cannot be judged at all.
const (
	PerfRealtime       = "perf.realtime"
	PerfRealtimePrefix = "perf.realtime."
)

// SessionE2E is a realtime session's E2E: the last chunk's SessionMs (init sent → its stats
// received); NaN when no chunk_stats arrived.
func SessionE2E(chunks []results.ChunkStats) float64 {
	if n := len(chunks); n > 0 {
		return chunks[n-1].SessionMs
	}
	return math.NaN()
}

// realtimeSeries are the per-chunk series SGLang summarises, in its order
// (summarize_realtime_perf_stats's metrics dict): each gives avg_, p95_ and max_ metrics.
var realtimeSeries = []struct {
	name string
	of   func(results.ChunkStats) float64
}{
	{"request_prepare_ms", func(s results.ChunkStats) float64 { return s.RequestPrepareMs }},
	{"scheduler_forward_ms", func(s results.ChunkStats) float64 { return s.SchedulerForwardMs }},
	{"raw_payload_build_ms", func(s results.ChunkStats) float64 { return s.RawPayloadBuildMs }},
	{"raw_write_ms", func(s results.ChunkStats) float64 { return s.RawWriteMs }},
	{"ws_write_ms", func(s results.ChunkStats) float64 { return s.WSWriteMs }},
	{"chunk_total_ms", func(s results.ChunkStats) float64 { return s.ChunkTotalMs }},
	// SGLang divides by 1024·1024: the "mb" of its name is MiB.
	{"ws_payload_mb", func(s results.ChunkStats) float64 { return float64(s.WSPayloadBytes) / (1024 * 1024) }},
}

// The summary's counts and the two metrics of the ignored chunks, which SGLang's summary
// holds only when some chunks are ignored.
const (
	realtimeIgnoredMaxTotal   = "ignored_max_chunk_total_ms"
	realtimeIgnoredMaxForward = "ignored_max_scheduler_forward_ms"
)

var realtimeCounts = []string{"num_chunks", "total_frames", "ignored_initial_chunks", "guarded_chunks"}

// RealtimeMetrics is every metric name SGLang's realtime summary can hold, sorted: a
// threshold on any other name is an error (validate_realtime_perf_stats raises ValueError).
func RealtimeMetrics() []string {
	names := append([]string{realtimeIgnoredMaxTotal, realtimeIgnoredMaxForward}, realtimeCounts...)
	for _, s := range realtimeSeries {
		names = append(names, "avg_"+s.name, "p95_"+s.name, "max_"+s.name)
	}
	sort.Strings(names)
	return names
}

// RealtimeMetricProblem says what is wrong with a threshold on metric name for a case that
// ignores ignore initial chunks, or "" when SGLang's summary will hold it: an unknown name,
// or one of the ignored-chunk metrics when no chunk is ignored (SGLang's summary then lacks
// it, and validate_realtime_perf_stats raises "unknown realtime perf metric").
func RealtimeMetricProblem(name string, ignore int) string {
	if !slices.Contains(RealtimeMetrics(), name) {
		return fmt.Sprintf("unknown realtime perf metric %q; available metrics: %s", name, strings.Join(RealtimeMetrics(), ", "))
	}
	if ignore == 0 && (name == realtimeIgnoredMaxTotal || name == realtimeIgnoredMaxForward) {
		return fmt.Sprintf("realtime perf metric %q exists only when ignore_initial_chunks > 0 (SGLang's summary holds it only then)", name)
	}
	return ""
}

// summarizeRealtime is SGLang's summarize_realtime_perf_stats (realtime_consistency.py,
// triple-mu/sglang 2026-06-02): the first ignore chunks are left out of the guarded series;
// each series gives its mean (statistics.fmean), its p95 (the sorted values at index
// min(n−1, int(n·0.95))) and its max; the counts cover every chunk. No chunks is an empty
// summary; a negative ignore, or one that leaves no chunk to guard, is an error.
func summarizeRealtime(stats []results.ChunkStats, ignore int) (map[string]float64, error) {
	if len(stats) == 0 {
		return map[string]float64{}, nil
	}
	if ignore < 0 {
		return nil, fmt.Errorf("ignore_initial_chunks must be non-negative, got %d", ignore)
	}
	if ignore >= len(stats) {
		return nil, fmt.Errorf("ignore_initial_chunks %d must leave at least one of the %d realtime chunks to guard", ignore, len(stats))
	}
	ignored, guarded := stats[:ignore], stats[ignore:]
	frames := 0
	for _, s := range stats {
		frames += s.NumFrames
	}
	sum := map[string]float64{
		"num_chunks":             float64(len(stats)),
		"total_frames":           float64(frames),
		"ignored_initial_chunks": float64(ignore),
		"guarded_chunks":         float64(len(guarded)),
	}
	if len(ignored) > 0 {
		sum[realtimeIgnoredMaxTotal] = maxOf(ignored, func(s results.ChunkStats) float64 { return s.ChunkTotalMs })
		sum[realtimeIgnoredMaxForward] = maxOf(ignored, func(s results.ChunkStats) float64 { return s.SchedulerForwardMs })
	}
	for _, series := range realtimeSeries {
		values := make([]float64, len(guarded))
		total := 0.0
		for i, s := range guarded {
			values[i] = series.of(s)
			total += values[i]
		}
		sorted := slices.Clone(values)
		slices.Sort(sorted)
		n := len(sorted)
		sum["avg_"+series.name] = total / float64(n)
		sum["p95_"+series.name] = sorted[min(n-1, int(float64(n)*0.95))]
		sum["max_"+series.name] = sorted[n-1]
	}
	return sum, nil
}

func maxOf(stats []results.ChunkStats, of func(results.ChunkStats) float64) float64 {
	m := math.Inf(-1)
	for _, s := range stats {
		m = max(m, of(s))
	}
	return m
}

// Realtime is SGLang's validate_realtime_perf_stats (realtime_consistency.py, triple-mu/sglang
// 2026-06-02): one check per threshold, in name order, failing when the summary's value is
// greater than the threshold (equal passes). No thresholds is no check, as SGLang returns
// before summarising; no chunk stats, or an ignore that leaves none to guard, fails
// PerfRealtime; an unknown metric is an error (SGLang raises ValueError).
func Realtime(stats []results.ChunkStats, ignore int, thresholds map[string]float64) []results.Check {
	if len(thresholds) == 0 {
		return nil
	}
	sum, err := summarizeRealtime(stats, ignore)
	if err != nil {
		return []results.Check{Failed(PerfRealtime, err.Error())}
	}
	if len(sum) == 0 {
		return []results.Check{{Name: PerfRealtime, Status: results.Fail, Detail: "no realtime chunk stats were received", Cause: "no realtime chunk stats"}}
	}
	names := make([]string, 0, len(thresholds))
	for name := range thresholds {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []results.Check
	for _, name := range names {
		limit := thresholds[name]
		actual, ok := sum[name]
		if !ok {
			out = append(out, Errored(PerfRealtimePrefix+name, RealtimeMetricProblem(name, ignore)))
			continue
		}
		c := results.Check{Name: PerfRealtimePrefix + name, Status: results.Pass, Value: Float(actual), Limit: Float(limit),
			Detail: fmt.Sprintf("%s over %d guarded of %d chunks (first %d ignored): actual=%.2f, limit=%.2f",
				name, int(sum["guarded_chunks"]), len(stats), ignore, actual, limit)}
		if actual > limit {
			c.Status = results.Fail
			c.Cause = fmt.Sprintf("realtime %s %.2f > %.2f", name, actual, limit)
		}
		out = append(out, c)
	}
	return out
}

// RealtimeRecordID is the request id whose performance record carries a realtime session's
// VRAM: that of the last chunk that names one, as SGLang's _validate_realtime_performance
// (test_server_common.py, triple-mu/sglang 2026-08-20) takes next(reversed(chunk_stats)); ""
// when no chunk names one (SGLang fails "realtime chunk stats are missing request IDs").
func RealtimeRecordID(stats []results.ChunkStats) string {
	for i := len(stats) - 1; i >= 0; i-- {
		if stats[i].RequestID != "" {
			return stats[i].RequestID
		}
	}
	return ""
}

// RealtimeE2E is perf.e2e of a realtime session, which SGLang guards since PR #39206
// ("Realtime E2E covers the requested generation session, not only its final chunk"): the
// client's time from sending the init message until the last requested chunk and its
// chunk_stats arrived, against the scenario's expected_e2e_ms with the E2E tolerance and pad
// (reading: the PR's code is not readable). A session that delivered no stats has no E2E,
// which fails as a missing measurement; the AMD rule applies (amd).
func RealtimeE2E(chunks []results.ChunkStats, b PerfBaseline) []results.Check {
	v := SessionE2E(chunks)
	return b.amd(func(b PerfBaseline) []results.Check {
		c := limitCheck(PerfE2E, "ms", v, b.E2EMs, b.Tol.E2E, E2EPadMs, b.ImprovementThreshold, "realtime session (init sent → last chunk's stats)")
		if c.Status == results.Fail && !(v > 0) {
			c.Detail = "E2E duration missing: " + c.Detail
		}
		return []results.Check{c}
	})
}
