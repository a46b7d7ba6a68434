package results

import (
	"cmp"
	"fmt"
	"math"
	"time"
)

// Schema is the version tag written into every results.json.
const Schema = "diffusion-check/results/v1"

// Status is the outcome of a check, a request, a case or a whole run.
type Status string

// The statuses, as written in results files.
const (
	Pass      Status = "pass"
	Fail      Status = "fail"
	Skip      Status = "skip"
	Error     Status = "error"
	Known     Status = "known"
	Cancelled Status = "cancelled"
	// Flaky is a perf or memory failure that the case's confirmation requests did not
	// reproduce, in a case whose suite says on_unconfirmed: flaky (see Confirmation): shown,
	// not red.
	Flaky Status = "flaky"
)

// Valid says whether s is one of the statuses above: what a judged record holds.
func (s Status) Valid() bool {
	switch s {
	case Pass, Fail, Skip, Error, Known, Cancelled, Flaky:
		return true
	}
	return false
}

// Check names are stable strings: reports, known-failure files and tools match on them.
const (
	ServerAlive   = "server.alive"
	ServerWarmup  = "server.warmup"
	OutputPresent = "output.present"
	OutputValid   = "output.valid"
	PerfRecord    = "perf.record"
)

// Check is one verdict on one measurement of one request (or, for case-level checks such as
// a failed server start, of one case).
type Check struct {
	Name   string   `json:"name"`
	Status Status   `json:"status"`
	Value  *float64 `json:"value,omitempty"`
	Limit  *float64 `json:"limit,omitempty"`
	Unit   string   `json:"unit,omitempty"`
	Detail string   `json:"detail,omitempty"`
	// Baseline, Tolerance and Pad say how Limit was derived (limit = max(baseline × (1 +
	// tolerance), baseline + pad)), so a report can show why a value failed.
	Baseline  *float64 `json:"baseline,omitempty"`
	Tolerance *float64 `json:"tolerance,omitempty"`
	Pad       *float64 `json:"pad,omitempty"`
	// Source labels where a measurement came from when there are several (memory:
	// nvml_process, nvml_device, server_reserved, server_allocated, host_anon).
	Source string `json:"source,omitempty"`
	// Note is a remark that is not a failure, e.g. a possible improvement over the baseline.
	Note string `json:"note,omitempty"`
	// Cause says in a few words why the check did not pass, for one-line summaries such as
	// the PR comment's list of problems ("memory grows +600 MiB per request", "server
	// crashed, exit 139"); Detail tells the whole story. Empty when Value, Limit and
	// Baseline say it all.
	Cause string `json:"cause,omitempty"`
	// Known is the known-failures entry that matched this check, if any.
	Known *KnownFailure `json:"known,omitempty"`
	// Confirm is what the case's confirmation requests said about this failed check (the
	// suite's confirm: K); nil when none were asked for or it did not fail.
	Confirm *Confirmation `json:"confirm,omitempty"`
	// Spread is the baseline's spread of this metric over the requests the baseline was
	// made from, when the baseline has a spread file; the report says how far outside it
	// a failing value is.
	Spread *Spread `json:"spread,omitempty"`
}

// KnownFailure is the entry of a known-failures file that matched a check.
type KnownFailure struct {
	Reason string `json:"reason"`
	Link   string `json:"link,omitempty"`
	Until  string `json:"until,omitempty"` // YYYY-MM-DD; after it the entry has expired
	// Entry is where the entry is written ("known-failures.yaml:12"): the entries that
	// matched several checks are told apart by it.
	Entry string `json:"entry,omitempty"`
	// State is "known" (still failing, reported as known), "fixed" (the check now passes:
	// remove the entry) or "expired" (the entry is past Until: the failure counts).
	State string `json:"state"`
}

// The states of KnownFailure.State.
const (
	KnownStateKnown   = "known"
	KnownStateFixed   = "fixed"
	KnownStateExpired = "expired"
)

// Result is what one `run` (one partition of one lane) produced.
type Result struct {
	Schema    string    `json:"schema"`
	Suite     string    `json:"suite"`
	Lane      string    `json:"lane,omitempty"`
	GPU       string    `json:"gpu,omitempty"`
	Mode      string    `json:"mode,omitempty"`
	Partition Partition `json:"partition"`
	// PlanHash identifies the plan a partition was cut from, so that merging can prove that
	// every planned case ran exactly once.
	PlanHash string `json:"plan_hash,omitempty"`
	// Planned lists the case ids of every partition of the plan, so that a merge can name the
	// cases of a partition whose results never arrived.
	Planned [][]string `json:"planned,omitempty"`
	// Selection and Deselected are the plan's test-impact selection: every case it left out,
	// and why (selection.go). A merge carries them per lane.
	Selection  *Selection   `json:"selection,omitempty"`
	Deselected []Deselected `json:"deselected,omitempty"`
	Commit     string       `json:"commit,omitempty"`
	// Machine says where this partition ran; nil in files written before it was recorded.
	Machine *Machine `json:"machine,omitempty"`
	// Machines, in a merged lane (Merge), is every partition's Machine, by partition index.
	Machines   []Machine    `json:"machines,omitempty"`
	Status     Status       `json:"status"`
	StartedAt  time.Time    `json:"started_at"`
	FinishedAt time.Time    `json:"finished_at"`
	Cases      []CaseResult `json:"cases"`
	Errors     []string     `json:"errors,omitempty"`
	// Incomplete, when set, says why this file does not hold the run's final verdicts: it
	// was written at the start of the run or when it was cancelled, and the run ended
	// before its final write; or a reader rebuilt it from requests.jsonl. Its requests
	// without a result say they have none.
	Incomplete string `json:"incomplete,omitempty"`
	// Files says which baseline and thresholds files the run read and why, the runner pool
	// whose references applied, and the pinned ground-truth store; nil for a run that read
	// none of them.
	Files *Files `json:"files,omitempty"`
}

// Files is which data files a run read: SGLang chooses them by platform (compute capability,
// or its override variables) and, in a baseline file with runner_overrides, by the runner's
// RUNNER_NAME.
type Files struct {
	Baselines    string `json:"baselines,omitempty"`
	BaselinesWhy string `json:"baselines_why,omitempty"`
	// BaselinesMerged are the vendor files whose scenarios were merged into the baselines
	// (SGLang's ascend/perf_baselines_npu.json and musa/perf_baselines_musa.json).
	BaselinesMerged []string `json:"baselines_merged,omitempty"`
	Thresholds      string   `json:"thresholds,omitempty"`
	ThresholdsWhy   string   `json:"thresholds_why,omitempty"`
	Runner          string   `json:"runner,omitempty"`
	// Pool is the runner_overrides prefix whose references applied when InPool (an empty
	// prefix is a pool of every runner); a run of the default pool has neither.
	Pool   string `json:"pool,omitempty"`
	InPool bool   `json:"in_pool,omitempty"`
	// Warnings are the soft problems of the data files as they applied (keys of a
	// runner_overrides pool that SGLang's loader ignores).
	Warnings []string `json:"warnings,omitempty"`
	// GroundTruth is the pinned git store the ground truth came from (the suite's
	// `ground_truth: {repo, commit, path}`); nil for a folder.
	GroundTruth *GroundTruthStore `json:"ground_truth,omitempty"`
}

// GroundTruthStore is a git repository at a commit, and the store's folder in it.
type GroundTruthStore struct {
	Repo   string `json:"repo"`
	Commit string `json:"commit"`
	Path   string `json:"path,omitempty"`
}

// Partition says which part of a planned lane a result covers: Index is 0-based, Total ≥ 1.
type Partition struct {
	Index int `json:"index"`
	Total int `json:"total"`
}

// CaseResult holds every request of one case and the case-level checks (server start).
type CaseResult struct {
	ID       string          `json:"id"`
	Server   string          `json:"server"`
	Lane     string          `json:"lane,omitempty"`
	Modality string          `json:"modality"`
	Status   Status          `json:"status"`
	Load     *Load           `json:"load,omitempty"`
	Checks   []Check         `json:"checks,omitempty"`
	Requests []RequestResult `json:"requests"`
	// Confirm holds the confirmation requests sent after Requests because a perf or memory
	// check failed (the suite's confirm: K), in the order sent. They are not among the
	// case's requests and do not change their verdicts; they label the failed checks.
	Confirm []RequestResult `json:"confirm,omitempty"`
	Errors  []string        `json:"errors,omitempty"`
	// WallMs is the case's wall time including any server start it paid for.
	WallMs float64 `json:"wall_ms"`
	// IdleMs is how long, between the case's first send and its last answer, none of its
	// requests was in flight: the time the harness kept the GPU waiting (for a perf record,
	// or for validations when too many were pending).
	IdleMs float64 `json:"idle_ms,omitempty"`
	// LogTail holds the last lines of the server log when something went wrong.
	LogTail []string `json:"log_tail,omitempty"`
	// Attempts are the earlier runs of a case that the suite's retry mode ran again (oldest
	// first, each with its own requests and checks); the case's own fields are its last run,
	// whose verdict stands, as SGLang's runner keeps the last attempt's result.
	Attempts []CaseResult `json:"attempts,omitempty"`
	// Skipped says why SGLang's harness would skip the whole case (pytest.skip), e.g. a video
	// job that timed out on AMD; its requests that were skipped do not fail it then.
	Skipped string `json:"skipped,omitempty"`
}

// Where a load clock ended (Load.Clock).
const (
	LoadClockLauncher = "launcher"
	LoadClockHealth   = "health"
)

// Load describes the server start that served a case. Reused marks a case that ran on a
// server already warm from an earlier case.
type Load struct {
	// DurationMs is the load time SGLang guards: process launch → all workers ready, the
	// server's warm-up excluded. Clock says where it ended: LoadClockLauncher (SGLang's
	// launcher line) or LoadClockHealth (the first answer of the health endpoint, 503 or 200,
	// for a server that logs no such line).
	DurationMs float64 `json:"duration_ms"`
	Clock      string  `json:"clock,omitempty"`
	// WarmupMs is the server's warm-up after that, until it answered ready and its port
	// accepted connections; ReadyMs is launch → ready, the two together.
	WarmupMs float64 `json:"warmup_ms,omitempty"`
	ReadyMs  float64 `json:"ready_ms,omitempty"`
	// LoadInclusiveE2EMs is DurationMs plus the first request's server E2E, the
	// load-inclusive E2E SGLang reports beside its two guards (PR #39206: "their sum is
	// reporting-only"); not a verdict.
	LoadInclusiveE2EMs float64            `json:"load_inclusive_e2e_ms,omitempty"`
	Reused             bool               `json:"reused,omitempty"`
	PeakVRAMMiB        map[string]float64 `json:"peak_vram_mb,omitempty"`
	// WarmupPeakVRAMMiB is the server's warm-up peak (the perf record's warmup_peak
	// snapshot), by source, when the server reports one.
	WarmupPeakVRAMMiB map[string]float64 `json:"warmup_peak_vram_mb,omitempty"`
	// MemoryTimeline is the server start's memory over time (artifacts/memory/<start>.json,
	// relative to --out), which the run writes when the server stops; "" when its sampler
	// keeps none.
	MemoryTimeline string `json:"memory_timeline,omitempty"`
	// Pictures are the pictures of the server start's failures (a memory.load_peak over its
	// limit).
	Pictures []Picture `json:"pictures,omitempty"`
}

// RequestResult is one request of a case, with its 1-based index among Of repetitions; a
// confirmation request (Confirm set) has its 1-based index among the Of confirmation
// requests the case may send.
type RequestResult struct {
	Case          string             `json:"case,omitempty"`
	Index         int                `json:"index"`
	Of            int                `json:"of"`
	RequestID     string             `json:"request_id,omitempty"`
	Status        Status             `json:"status"`
	StartedAt     time.Time          `json:"started_at"`
	E2EMs         float64            `json:"e2e_ms"`
	ServerTotalMs float64            `json:"server_total_ms,omitempty"`
	Stages        Stages             `json:"stages_ms,omitempty"`
	StepsMs       []float64          `json:"steps_ms,omitempty"`
	PeakVRAMMiB   map[string]float64 `json:"peak_vram_mb,omitempty"`
	Output        *Output            `json:"output,omitempty"`
	Checks        []Check            `json:"checks"`
	// RealtimeChunks are the chunk_stats of a realtime case's session, as the server sent
	// them (all that arrived, also when the session failed).
	RealtimeChunks []ChunkStats `json:"realtime_chunks,omitempty"`
	// RealtimeFirstFrame is a realtime case's first frame named by URL, as fetched before
	// the session (also when it was no image); nil for a file or no first frame.
	RealtimeFirstFrame *FirstFrame `json:"realtime_first_frame,omitempty"`
	// Pictures are the pictures the run drew of this request's failures, in the order drawn;
	// none for a request that did not fail one of the checks they show.
	Pictures []Picture `json:"pictures,omitempty"`
	// Confirm marks a confirmation request (CaseResult.Confirm), which requests.jsonl
	// holds beside the case's own requests.
	Confirm bool `json:"confirm,omitempty"`
	// Revised marks a later line of a request in requests.jsonl: its verdict as a later event
	// changed it (the labels of its case's confirmation requests, flaky; a cancelled retry
	// that leaves the earlier attempt's verdict standing). The last line of a request is its
	// final verdict. Never set in results.json.
	Revised bool `json:"revised,omitempty"`
	// Revision says, on a revised line, what changed ("confirmation: perf.e2e reproduced in
	// 2/2 confirmation requests"). Never set in results.json.
	Revision string `json:"revision,omitempty"`
}

// Name names the request as reports and verdicts do: "request K", or "confirmation request
// K" for a confirmation request.
func (rr RequestResult) Name() string {
	if rr.Confirm {
		return fmt.Sprintf("confirmation request %d", rr.Index)
	}
	return fmt.Sprintf("request %d", rr.Index)
}

// Output describes the media a request returned, as decoded from the file, not as claimed.
type Output struct {
	Kind      string  `json:"kind"` // image or video
	Path      string  `json:"path,omitempty"`
	Format    string  `json:"format,omitempty"`
	Bytes     int64   `json:"bytes"`
	Width     int     `json:"width,omitempty"`
	Height    int     `json:"height,omitempty"`
	Frames    int     `json:"frames,omitempty"`
	FPS       float64 `json:"fps,omitempty"`
	DurationS float64 `json:"duration_s,omitempty"`
	Audio     *Audio  `json:"audio,omitempty"`
}

// Audio describes an output's audio track.
type Audio struct {
	Codec      string  `json:"codec"`
	SampleRate int     `json:"sample_rate"`
	Channels   int     `json:"channels"`
	DurationS  float64 `json:"duration_s"`
}

// SetLoadInclusive sets LoadInclusiveE2EMs from the first request the server start served
// (nil, a reused server, or a first request without a server E2E: nothing to set).
func (l *Load) SetLoadInclusive(reqs []RequestResult) {
	if l == nil || l.Reused || len(reqs) == 0 || !(reqs[0].ServerTotalMs > 0) || !(l.DurationMs > 0) {
		return
	}
	l.LoadInclusiveE2EMs = l.DurationMs + reqs[0].ServerTotalMs
}

// DefaultLane names the lane of cases that belong to none.
const DefaultLane = "default"

// LaneOf is the lane a case of r belongs to when merged: its own, else the lane its run was
// asked for, else DefaultLane.
func (r Result) LaneOf(c CaseResult) string { return cmp.Or(c.Lane, r.Lane, DefaultLane) }

// Spread summarises one metric over the requests a baseline was made from: how many values
// (N), the smallest, the median, the largest, and the median absolute deviation (MAD: the
// median of |value − median|), a measure of noise that one outlier cannot inflate. The
// baseline itself keeps the worst value; the spread says how much the values moved.
type Spread struct {
	N      int     `json:"n"`
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
	MAD    float64 `json:"mad"`
}

// ChunkStats is one chunk_stats message of a realtime session, as SGLang's harness parses it
// (realtime_consistency.py RealtimeChunkStats / parse_realtime_chunk_stats, triple-mu/sglang
// 2026-06-02): the server's timings of one generated chunk, in ms (sent rounded to whole ms,
// realtime_video_api.py _transport_ms), and its sizes.
type ChunkStats struct {
	Index              int     `json:"chunk_index"`
	RequestID          string  `json:"request_id,omitempty"`
	ContentType        string  `json:"content_type,omitempty"`
	NumFrames          int     `json:"num_frames"`
	RawBytes           int64   `json:"raw_bytes"`
	WSPayloadBytes     int64   `json:"ws_payload_bytes"`
	RequestPrepareMs   float64 `json:"request_prepare_ms"`
	SchedulerForwardMs float64 `json:"scheduler_forward_ms"`
	RawPayloadBuildMs  float64 `json:"raw_payload_build_ms"`
	RawWriteMs         float64 `json:"raw_write_ms"`
	WSWriteMs          float64 `json:"ws_write_ms"`
	ChunkTotalMs       float64 `json:"chunk_total_ms"`
	// SessionMs is the client's time from sending the session's init message until these
	// stats arrived; the last chunk's is the session's E2E (RealtimeE2E).
	SessionMs float64 `json:"session_ms,omitempty"`
}

// FirstFrame is the first frame a realtime session named by URL, as the harness fetched it
// before the session (the server fetches it again, as SGLang's does): the URL, the body's
// size, SHA-256 (hex) and sniffed type (net/http's DetectContentType).
type FirstFrame struct {
	URL         string `json:"url"`
	Bytes       int64  `json:"bytes"`
	SHA256      string `json:"sha256"`
	ContentType string `json:"content_type"`
}

// EmptyPartition reports whether r is the run of a partition its plan gave no cases, that
// ran none and had no problem: it passes, and a merge does not count it as speaking for its
// lane.
func (r *Result) EmptyPartition() bool {
	return len(r.Cases) == 0 && len(r.Errors) == 0 && r.Partition.Index >= 0 &&
		r.Partition.Index < len(r.Planned) && len(r.Planned[r.Partition.Index]) == 0
}

// Confirmation is what a case's confirmation requests said about one failed check: in how
// many of them the same check (same name and source) failed again, passed, or gave no
// verdict.
type Confirmation struct {
	State  string `json:"state"`
	Failed int    `json:"failed"`
	Passed int    `json:"passed"`
	// Unmeasured counts the confirmation requests that gave no verdict on the check.
	Unmeasured int `json:"unmeasured,omitempty"`
	// Of is how many confirmation requests were sent; Max is the case's confirm (K).
	// Of < Max when confirmation stopped early (every failed check reproduced, the server
	// died, the run was cancelled).
	Of  int `json:"of"`
	Max int `json:"max"`
	// Note says why confirmation was cut short or gave no verdict, when it did.
	Note string `json:"note,omitempty"`
}

// Text is the label in a few words: "reproduced in 2/2 confirmation requests", "not
// reproduced in 0/2", "inconclusive: …".
func (c *Confirmation) Text() string {
	switch c.State {
	case ConfirmReproduced:
		return fmt.Sprintf("reproduced in %d/%d confirmation requests", c.Failed, c.Of)
	case ConfirmNotReproduced:
		return fmt.Sprintf("not reproduced in %d/%d confirmation requests", c.Failed, c.Of)
	}
	s := fmt.Sprintf("not confirmed: failed in %d/%d confirmation requests, %d without a verdict", c.Failed, c.Of, c.Unmeasured)
	if c.Note != "" {
		s += " (" + c.Note + ")"
	}
	return s
}

// MADs is how far v lies from the median in MADs, signed: (v − median) / MAD, +4.1 for a
// value 4.1 MADs above it. ok is false when the MAD is zero (one value, or values all
// alike), where no such distance exists; Outside then says whether v differs from them.
func (s Spread) MADs(v float64) (d float64, ok bool) {
	if s.MAD <= 0 || math.IsNaN(s.MAD) || s.N == 0 {
		return 0, false
	}
	return (v - s.Median) / s.MAD, true
}

// Outside reports whether v lies outside every value the spread saw (below Min or above
// Max).
func (s Spread) Outside(v float64) bool { return s.N > 0 && (v < s.Min || v > s.Max) }

// The states of Confirmation.State.
const (
	// ConfirmReproduced: the check failed again in at least one confirmation request.
	ConfirmReproduced = "reproduced"
	// ConfirmNotReproduced: every confirmation request sent measured the check, and it
	// passed in each.
	ConfirmNotReproduced = "not_reproduced"
	// ConfirmInconclusive: it never failed again, but some confirmation request gave no
	// verdict on it (the server crashed, the request errored or was cancelled, no perf
	// record), or none could be sent. Not a pass: the failure stands as it is.
	ConfirmInconclusive = "inconclusive"
)

// Picture is a picture the run drew of a failure, a file of the output folder.
type Picture struct {
	// Kind is what it shows: PictureConsistency, PictureRepeat, PictureRepeatCurves or
	// PictureMemory.
	Kind string `json:"kind"`
	// Path is the file, relative to --out, with "/": artifacts/<case>/request-<i>/….png.
	Path string `json:"path"`
	// Check and Source name the failed check a memory picture shows.
	Check  string `json:"check,omitempty"`
	Source string `json:"source,omitempty"`
}

// The kinds of Picture.
const (
	// PictureConsistency: the worst frame against the ground truth (ground truth | output |
	// SSIM map).
	PictureConsistency = "consistency"
	// PictureRepeat: the worst frame against request 1 of the server start (request 1 |
	// request k | SSIM map).
	PictureRepeat = "repeat"
	// PictureRepeatCurves: SSIM per frame against request 1 (and the ground truth).
	PictureRepeatCurves = "repeat_curves"
	// PictureMemory: the server start's memory over time, the failing window shaded.
	PictureMemory = "memory"
)

// PictureOf is the first picture of kind among pics, and whether there is one.
func PictureOf(pics []Picture, kind string) (Picture, bool) {
	for _, p := range pics {
		if p.Kind == kind {
			return p, true
		}
	}
	return Picture{}, false
}
