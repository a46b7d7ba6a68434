package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/diffusion-check/diffusion-check/baselines"
	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/clip"
	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/judge"
	"github.com/diffusion-check/diffusion-check/plan"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/suite"
)

// Options configures one run of one partition of one lane.
type Options struct {
	Suite     *suite.Suite
	Lane      string // empty: every lane
	Partition results.Partition
	// Plan is the split the partition belongs to; nil means plan.ForSuite with GPU and
	// Partition.Total.
	Plan  *plan.Plan
	Cases []string // restrict to these case ids; empty: all of the partition
	Out   string
	// Force lets a run write into an Out that holds an earlier run, whose files it removes
	// first (results.ClearOut); without it such an Out is refused.
	Force  bool
	Mode   Mode
	Commit string
	GPU    string
	// Resolved are the data files that apply, as baselines.Resolve chose them (in cmd): the
	// platforms of the baseline and thresholds files and of the ground truth, and the runner
	// whose runner_overrides pool applies. Its Class is GPU when it names none.
	Resolved baselines.Resolved
	// Machine says where the run happens (runner, host, CPU, GPUs), for results.json; nil
	// leaves it out.
	Machine *results.Machine
	// Executable is the path of diffusion-check itself, which builtin servers run as `serve`.
	Executable string
	// Environ is the base environment of server processes.
	Environ []string
	// HTTPClient sends the requests; nil means a client without a global timeout (every
	// request has its own deadline).
	HTTPClient *http.Client
	// Progress receives one human-readable line per event; nil discards them.
	Progress io.Writer
	// Heartbeat is how often a server start or a request in flight prints a progress line
	// while it waits; zero means DefaultHeartbeat.
	Heartbeat time.Duration
	// ServerLog, when set, is called once per server start with a title for its log and
	// returns where to copy each line the server writes, as it writes it (cmd streams it
	// into a collapsible group of the Actions log). nil: the log goes only to its file.
	ServerLog func(title string) io.Writer
	// Tools are the ffmpeg and ffprobe the run decodes, probes and encodes with, as the
	// command probed them at its start (media.ProbeTools), and hands to its builtin servers;
	// the zero value is those on PATH, probed at their first use (media.OnPath).
	Tools media.Tools
	// Memory samples each server's GPU and host memory during load and every request; nil
	// means none (only server-reported memory is recorded).
	Memory MemorySampler
	// Perf configures the perf and memory verdicts (tolerance profile, env overrides).
	Perf PerfOptions
	// SkipConsistency skips every consistency and audio comparison, as SGLang's harness does
	// under SGLANG_SKIP_CONSISTENCY=1 (read by cmd), which its AMD workflows set.
	SkipConsistency bool
	// CLIPScorer scores output/ground-truth image pairs for consistency.clip; nil skips it.
	CLIPScorer *clip.Scorer
	// QualityScorer scores the output images of the cases the suite's quality_thresholds
	// gives floors (quality.*, clip.Scorer.Quality); nil fails every floor set, naming the
	// flag.
	QualityScorer *clip.Scorer
	// ValidateAhead is how many of a case's requests may wait for their validation beside
	// the requests in flight before the next send waits (pipeline.go); 0 means
	// defaultValidateAhead, negative none: each request is validated before the next is sent,
	// as SGLang's harness does.
	ValidateAhead int
	// ValidationThreads bounds the threads of a request's validation (compare.Helpers); 0
	// means the suite's validation_threads, else half the cores.
	ValidationThreads int
	// GTMemory bounds the decoded ground truth a case keeps in memory, in bytes, so that its
	// requests do not each decode it again (see compare.Cache); 0 means
	// compare.DefaultCacheBytes (1 GiB), negative keeps nothing.
	GTMemory int64
	// GTCache is the folder of the fetched ground-truth stores (the suite's `ground_truth:
	// {repo, commit, path}`), shared by the runs of a host: one entry per store
	// (internal/gitstore). cmd sets it; empty refuses a suite that names a store.
	GTCache string
	// GTMaxBytes caps the disk one fetch of a store fills (gitstore.Fetcher.MaxBytes); 0 is
	// gitstore.DefaultMaxBytes. cmd sets it from $DIFFUSION_CHECK_GT_MAX_MIB.
	GTMaxBytes int64
}

// ConfigError is an error of Run that lies in its options or in the suite's files (a bad
// partition, an unknown case, a malformed baseline file), not in the machine it runs on.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// Run executes the selected cases and returns their results. The returned error means the run
// could not happen at all: a *ConfigError for bad options or suite files, another error for
// an unwritable output folder; everything that went wrong with a server or a request is data
// in the result. On cancellation the result holds what finished, the rest marked cancelled,
// and results.json is still written.
func Run(ctx context.Context, opts Options) (*results.Result, error) {
	cases, verdicts, cons, err := configure(&opts)
	if err != nil {
		return nil, &ConfigError{err}
	}
	if err := cons.fetchStore(ctx, opts, cases); err != nil {
		return nil, err
	}
	// Held until Run returns: a second run into this folder is refused before it touches
	// anything (it would interleave its lines into requests.jsonl and overwrite results.json).
	lock, err := lockOut(ctx, opts.Out)
	if err != nil {
		return nil, err
	}
	// The results are written by then; a failed close of the lock file changes none of them.
	defer func() { _ = lock.release() }()
	removed, err := results.ClearOut(opts.Out, opts.Force)
	if err != nil {
		return nil, err
	}
	rec, err := results.NewWriter(opts.Out)
	if err != nil {
		return nil, err
	}
	// For the early returns; finish closes it and reports a failure to.
	defer func() { _ = rec.Close() }()
	rec.Place(placement(opts, cases))
	r := newRun(ctx, opts, rec, verdicts, cons)
	if len(removed) > 0 {
		r.logf("--force: removed the earlier run's %s from %s", strings.Join(removed, ", "), opts.Out)
	}
	res := resultHead(opts, verdicts, cons)
	r.logFiles(res.Files)
	if len(cases) == 0 {
		r.logf("partition %d/%d has no cases in the plan: nothing to run, results.json says so", opts.Partition.Index, opts.Partition.Total)
	}
	head := *res
	if err := r.writeEarly(head, cases); err != nil {
		return nil, err
	}
	res.Cases = r.execute(ctx, head, cases)
	return r.finish(res)
}

// configure fills the defaults of opts (one partition, the suite's plan) and reads what the
// run is judged by; every error it returns lies in the options or the suite's files.
func configure(opts *Options) ([]*suite.Case, *judge.Config, *consistencyConfig, error) {
	if opts.Partition.Total == 0 {
		opts.Partition.Total = 1
	}
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	if opts.Plan == nil {
		var err error
		if opts.Plan, err = plan.ForSuite(opts.Suite, opts.Lane, opts.GPU, opts.Partition.Total); err != nil {
			return nil, nil, nil, err
		}
	}
	opts.Plan = opts.Plan.Widen(opts.Partition.Total)
	cases, err := selectCases(opts.Suite, opts.Plan, opts.Partition, opts.Cases)
	if err != nil {
		return nil, nil, nil, err
	}
	verdicts, err := loadPerf(*opts)
	if err != nil {
		return nil, nil, nil, err
	}
	cons, err := loadConsistency(*opts)
	if err != nil {
		return nil, nil, nil, err
	}
	return cases, verdicts, cons, nil
}

// placement says where each request line belongs, so that a lost results.json is rebuilt
// into its own lane and partition.
func placement(opts Options, cases []*suite.Case) results.Placement {
	lanes := map[string]string{}
	for _, c := range cases {
		lanes[c.ID] = c.Lane
	}
	return results.Placement{Partition: opts.Partition, PlanHash: opts.Plan.Hash, Lanes: lanes}
}

// newRun is the state of one run, with the defaults of the options it leaves unset.
func newRun(ctx context.Context, opts Options, rec *results.Writer, verdicts *judge.Config, cons *consistencyConfig) *run {
	r := &run{opts: opts, rec: rec, progress: opts.Progress, judge: verdicts,
		finished: map[requestKey]results.RequestResult{}, held: map[requestKey]heldRequest{}, cancelled: ctx.Done(), snapshotDone: make(chan struct{}),
		swept: map[*server]bool{}, mediaTools: mediaToolsText(opts.Tools)}
	if opts.HTTPClient == nil {
		r.opts.HTTPClient = &http.Client{}
	}
	r.inputs = &inputs{hc: r.opts.HTTPClient, logf: r.logf}
	r.disk = newDisk(r.logf)
	r.val = newValidator(r.opts, cons, rec, r.logf)
	return r
}

// resultHead is the part of the run's result known before anything runs.
func resultHead(opts Options, verdicts *judge.Config, cons *consistencyConfig) *results.Result {
	return &results.Result{
		Schema:    results.Schema,
		Suite:     opts.Suite.DisplayName(),
		Lane:      opts.Lane,
		GPU:       opts.GPU,
		Mode:      opts.Mode.String(),
		Partition: opts.Partition,
		PlanHash:  opts.Plan.Hash,
		Planned:   opts.Plan.CaseLists(),
		// What the plan's selection left out travels with every partition, so that the merge
		// counts those cases as deselected, not missing.
		Selection:  opts.Plan.Selection,
		Deselected: opts.Plan.Deselected,
		Commit:     opts.Commit,
		Machine:    machineOf(opts),
		StartedAt:  time.Now().UTC(),
		Files:      runFiles(opts, verdicts, cons),
	}
}

// writeEarly writes results.json before anything runs: a disk too full for it refuses the
// run before a server starts, and a run that dies before its final write leaves a file that
// says so (Incomplete, and an error) instead of none; report completes it from
// requests.jsonl.
func (r *run) writeEarly(head results.Result, cases []*suite.Case) error {
	early := r.snapshot(head, cases, "no result: the run ended before this request finished")
	early.Incomplete = "written at the start of the run, which ended before its final write; the requests in requests.jsonl are the ones that finished"
	early.Errors = append(early.Errors, "the run did not finish: results.json holds only what was known at its start")
	if err := r.save(&early); err != nil {
		return fmt.Errorf("write results.json before the run starts: %w", err)
	}
	return nil
}

// execute runs the cases, and their retries.
func (r *run) execute(ctx context.Context, head results.Result, cases []*suite.Case) []results.CaseResult {
	// On cancel (SIGINT or SIGTERM: GitHub sends SIGKILL 10 s after SIGINT) results.json is
	// written at once from what finished, before any server is stopped (a stop may take its
	// whole grace period); finish replaces it once everything has stopped.
	stopSnapshot := context.AfterFunc(ctx, func() {
		defer close(r.snapshotDone)
		r.writeSnapshot(head, cases)
	})
	var out []results.CaseResult
	for _, u := range units(r.opts.Suite, cases) {
		out = append(out, r.unit(ctx, u)...)
	}
	out = r.retry(ctx, out, cases)
	if stopSnapshot() {
		close(r.snapshotDone)
	} else {
		<-r.snapshotDone // never let the snapshot overwrite the final results
	}
	return out
}

// save judges res (judge.Finalize: the statuses of its requests, its cases and the run, from
// their checks) and writes it to results.json: every write of the run goes through here, so
// no status is stored that the judge did not set.
func (r *run) save(res *results.Result) error {
	judge.Finalize(res)
	return r.rec.Results(res)
}

// finish writes the final results.json and closes requests.jsonl.
func (r *run) finish(res *results.Result) (*results.Result, error) {
	if res.Cases == nil {
		res.Cases = []results.CaseResult{} // a partition with no cases: "cases": [], not null
	}
	res.FinishedAt = time.Now().UTC()
	r.reportKnown(res)
	failureIndex(r.opts.Out, res, r.logf)
	werr := r.save(res)
	// requests.jsonl is closed even when results.json failed, and its own failure (the last
	// records lost) is reported when results.json is safe.
	cerr := r.rec.Close()
	r.reportUnsaved(werr)
	if werr != nil {
		return res, fmt.Errorf("NOT SAVED: %w", werr)
	}
	if cerr != nil {
		return res, cerr
	}
	return res, nil
}

// machineOf is the run's machine, labelled with its partition.
func machineOf(opts Options) *results.Machine {
	if opts.Machine == nil {
		return nil
	}
	m := *opts.Machine
	m.Partition = opts.Partition.Index
	return &m
}

// requestKey names one request of one case, or one of its confirmation requests.
type requestKey struct {
	caseID  string
	index   int
	confirm bool
}

// writeSnapshot writes results.json as the run stands when it is cancelled: every request
// that finished with its result, every other one cancelled.
func (r *run) writeSnapshot(head results.Result, cases []*suite.Case) {
	began := time.Now()
	snap := r.snapshot(head, cases, "run cancelled before the request finished")
	snap.Incomplete = "written when the run was cancelled, before its servers stopped; the final write did not replace it"
	r.mu.Lock()
	kept := len(r.finished) + len(r.held)
	r.mu.Unlock()
	if err := r.save(&snap); err != nil {
		r.logf("cancelled: could not write results.json before stopping the servers: %v", err)
		return
	}
	r.logf("cancelled: results.json written in %s (%d finished requests kept, the rest cancelled); stopping the servers",
		time.Since(began).Round(time.Millisecond), kept)
}

// snapshot is the run as it stands: every request that finished with its result, every
// other one cancelled, saying why.
func (r *run) snapshot(head results.Result, cases []*suite.Case, why string) results.Result {
	snap := head
	snap.Cases = []results.CaseResult{}
	snap.FinishedAt = time.Now().UTC()
	r.mu.Lock()
	// kept is a request as it stands: recorded, or measured and held, judged now.
	kept := func(k requestKey) (results.RequestResult, bool) {
		if rr, ok := r.finished[k]; ok {
			return rr, true
		}
		if h, ok := r.held[k]; ok {
			return h.judgedAsCancelled(r.judge), true
		}
		return results.RequestResult{}, false
	}
	for _, c := range cases {
		cr := results.CaseResult{ID: c.ID, Server: c.Server, Lane: c.Lane, Modality: string(c.Modality)}
		for i := 1; i <= c.Repeat; i++ {
			rr, ok := kept(requestKey{c.ID, i, false})
			if !ok {
				rr = cancelledRequest(c, i, why)
			}
			cr.Requests = append(cr.Requests, rr)
		}
		// The confirmation requests that finished (their labels come with the final write).
		for i := 1; i <= c.Noise.Confirm; i++ {
			if rr, ok := kept(requestKey{c.ID, i, true}); ok {
				cr.Confirm = append(cr.Confirm, rr)
			}
		}
		snap.Cases = append(snap.Cases, cr)
	}
	r.mu.Unlock()
	return snap
}

// stopServer stops a server; after a cancel, only once results.json holds what finished.
func (r *run) stopServer(srv *server) {
	select {
	case <-r.cancelled:
		<-r.snapshotDone
	default:
	}
	srv.stop()
	r.mu.Lock()
	first := !r.swept[srv]
	r.swept[srv] = true
	r.mu.Unlock()
	if !first {
		return
	}
	r.writeTimeline(srv)
	var what []string
	if len(srv.survivors) > 0 {
		what = append(what, "killed "+strings.Join(srv.survivors, ", "))
	}
	if len(srv.left) > 0 {
		what = append(what, "could not kill "+strings.Join(srv.left, ", "))
	}
	if len(what) > 0 {
		r.logf("warning: server %s left processes running outside its process group (setsid): %s", srv.spec.Name, strings.Join(what, "; "))
	}
}

// unit is a run of cases served by one server start (reuse: true) or a single case.
type unit struct {
	server *suite.Server
	cases  []*suite.Case
}

// units groups the cases of a reuse server at the position of its first case, so that one
// warm server serves them all and no two servers hold the GPU at once.
func units(s *suite.Suite, cases []*suite.Case) []unit {
	var out []unit
	at := map[string]int{}
	for _, c := range cases {
		srv := s.Servers[c.Server]
		if srv.Reuse {
			if i, ok := at[c.Server]; ok {
				out[i].cases = append(out[i].cases, c)
				continue
			}
			at[c.Server] = len(out)
		}
		out = append(out, unit{server: srv, cases: []*suite.Case{c}})
	}
	return out
}

// selectCases returns the cases of a plan's partition, in suite order, restricted to ids when given.
// Every id must belong to the partition.
func selectCases(s *suite.Suite, plan *plan.Plan, p results.Partition, ids []string) ([]*suite.Case, error) {
	if p.Total != plan.Total || p.Index < 0 || p.Index >= p.Total {
		return nil, fmt.Errorf(
			"partition %d/%d: the plan has %d partition(s), not %d (plan makes no more than its cases fill): run --partition I/%d for I = 0 … %d, "+
				"as the matrix output of plan lists them",
			p.Index,
			p.Total,
			plan.Total,
			p.Total,
			plan.Total,
			plan.Total-1,
		)
	}
	in := map[string]bool{}
	for _, id := range plan.Cases(p.Index) {
		in[id] = true
	}
	want := map[string]bool{}
	var errs []error
	for _, id := range ids {
		if !in[id] {
			errs = append(errs, fmt.Errorf("case %q: not in lane %q partition %d/%d of %s", id, plan.Lane, p.Index, p.Total, s.Path))
		}
		want[id] = true
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var out []*suite.Case
	for _, c := range s.Cases {
		if in[c.ID] && (len(ids) == 0 || want[c.ID]) {
			out = append(out, c)
		}
	}
	return out, nil
}

// run holds the state of one Run.
type run struct {
	opts     Options
	rec      *results.Writer
	progress io.Writer
	starts   int // server starts so far, to name their log folders
	// loadClockNoted: the run said that a server logged no launcher line (noteLoadClock).
	loadClockNoted bool
	// inputs are the files and URLs the run's requests send (URLs fetched once).
	inputs  *inputs
	judge   *judge.Config // every verdict's rules and data (nil: only statuses)
	val     *validator
	servers []*server // every server started, to report output their logs could not keep
	// mediaTools is the run's ffmpeg probe as builtin servers take it (mediaToolsText).
	mediaTools string
	swept      map[*server]bool // servers whose stop has been reported (guarded by mu)

	// finished holds every recorded request and held every measured one whose validation is
	// pending (both guarded by mu), for the results.json written the moment the run is
	// cancelled; snapshotDone is closed once that write is over (or
	// will not happen), and servers are stopped after a cancel only then.
	finished     map[requestKey]results.RequestResult
	held         map[requestKey]heldRequest
	cancelled    <-chan struct{}
	snapshotDone chan struct{}

	mu      sync.Mutex // guards progress lines from concurrent requests, and unsaved
	unsaved []string   // what could not be written to disk (a full disk), said at the end
	lost    int        // request lines missing from requests.jsonl

	disk *disk // whether a write failed for want of space
}

// reportUnsaved says, in one block at the end of the run, everything that could not be
// written: results.json itself (werr), request lines missing from requests.jsonl, server
// output missing from the logs; and each server log that was cut to its caps.
func (r *run) reportUnsaved(werr error) {
	for _, s := range r.servers {
		// Not lost, but not all kept: the server's log was cut to its caps.
		if c := s.log.cutNote(); c != "" {
			r.logf("server log %s cut: %s", s.logPath, c)
		}
		if u := s.log.unsaved(); u != "" {
			r.unsaved = append(r.unsaved, s.logPath+": "+u)
		}
	}
	if werr != nil {
		r.mu.Lock()
		lost := r.lost
		r.mu.Unlock()
		r.logf(
			"NOT SAVED: results.json could not be written (%v); the file there is from before, marked incomplete; requests.jsonl lacks %d request lines; "+
				"report rebuilds this partition from requests.jsonl, marked incomplete",
			werr,
			lost,
		)
	}
	if len(r.unsaved) == 0 {
		return
	}
	holds := "results.json holds every request"
	if werr != nil {
		holds = "results.json could not be written either"
	}
	r.logf("NOT SAVED (disk full or unwritable; %s):\n  %s", holds, strings.Join(r.unsaved, "\n  "))
}

func (r *run) logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.progress, format+"\n", args...)
}

// unit runs the cases of one server start (or a fresh start per case after a server died).
func (r *run) unit(ctx context.Context, u unit) []results.CaseResult {
	var srv *server
	defer func() {
		if srv != nil {
			r.stopServer(srv)
		}
	}()
	var out []results.CaseResult
	for _, c := range u.cases {
		if ctx.Err() != nil {
			out = append(out, r.cancelledCase(c, "run cancelled before the case started"))
			continue
		}
		cr, keep := r.runCase(ctx, c, u.server, srv)
		out = append(out, cr)
		srv = keep
		if !u.server.Reuse && srv != nil {
			r.stopServer(srv)
			srv = nil
		}
	}
	return out
}

// runCase runs one case on warm (nil: start one). It returns the server to keep for the next
// case, or nil when the server is gone or was stopped.
func (r *run) runCase(ctx context.Context, c *suite.Case, spec *suite.Server, warm *server) (cr results.CaseResult, keep *server) {
	began := time.Now()
	defer r.val.cons.dropCache(c.ID)
	cr = results.CaseResult{ID: c.ID, Server: c.Server, Lane: c.Lane, Modality: string(c.Modality)}
	// Named results: the deferred assignment must reach the returned value.
	defer func() { cr.WallMs = ms(time.Since(began)) }()
	srv := warm
	if srv != nil && srv.dead() != "" {
		r.stopServer(srv)
		srv = nil
	}
	if srv != nil {
		cr.Load = &results.Load{Reused: true}
		r.logf("%s: reusing warm server %s", c.ID, spec.Name)
	} else {
		var load time.Duration
		var err error
		srv, load, err = r.start(ctx, c, spec)
		if err != nil {
			if ctx.Err() != nil {
				return r.cancelledCase(c, "run cancelled while the server was starting"), nil
			}
			detail := fmt.Sprintf("server %s failed to start: %v", spec.Name, err)
			var pe *startError
			if errors.As(err, &pe) && pe.srv == nil {
				// Could not even launch it: infrastructure or configuration, not a verdict on
				// the server. The case is an error and no request is recorded as run.
				cr.Errors = append(cr.Errors, detail)
				cr.Status = results.Error
				r.logf("%s: ERROR %s", c.ID, detail)
				return cr, nil
			}
			cause := "server failed to start"
			if errors.As(err, &pe) {
				cr.LogTail = pe.srv.log.lastLines(tailLines)
				cause = pe.srv.crashCause(cause)
				if pe.timedOut {
					cause = checks.CauseStartTimeout
				}
			}
			cr.Checks = r.judge.MarkKnown(c.ID, 0, append(cr.Checks, results.Check{Name: results.ServerAlive, Status: results.Fail, Detail: detail, Cause: cause}))
			for i := 1; i <= c.Repeat; i++ {
				cr.Requests = append(cr.Requests, notSent(c, i, "not sent: the server failed to start"))
				r.record(cr.Requests[i-1])
			}
			r.logf("%s: FAIL %s", c.ID, detail)
			return cr, nil
		}
		split := srv.loadClock(ctx)
		cr.Load = &results.Load{DurationMs: ms(split.load), Clock: results.LoadClockHealth, WarmupMs: ms(split.warmup), ReadyMs: ms(load)}
		if split.launcher {
			cr.Load.Clock = results.LoadClockLauncher
		}
		endLoadMemory(srv, &cr)
		r.logf("%s: server %s ready in %s (load %s, then warm-up %s; log %s)", c.ID, spec.Name,
			load.Round(time.Millisecond), split.load.Round(time.Millisecond), split.warmup.Round(time.Millisecond), srv.logPath)
		r.noteLoadClock(c.ID, split)
	}
	if ch := r.warmup(ctx, c, srv); ch != nil {
		cr.Checks = append(cr.Checks, *ch)
	}
	if ch := r.dynamicLoRA(ctx, c, srv); ch != nil {
		cr.Checks = append(cr.Checks, *ch)
	}
	cr.Requests = r.requests(ctx, c, srv, &cr)
	cr.Load.SetLoadInclusive(cr.Requests)
	if srv.dead() == "" && ctx.Err() == nil {
		cr.Checks = append(cr.Checks, r.contractChecks(ctx, c, spec, srv)...)
		// Last, as in SGLang's harness: it sends requests at once.
		if ck := r.dynamicBatching(ctx, c, srv); ck != nil {
			cr.Checks = append(cr.Checks, *ck)
		}
	}
	cr.Skipped = checks.SkippedBy(cr.Requests)
	cr.Checks = r.judge.Case(c, cr)
	r.confirm(ctx, c, srv, &cr)
	r.settleRest(c, &cr)
	r.memoryPictures(srv, &cr)
	return cr, r.keepOrStop(c, spec, srv, &cr)
}

// keepOrStop is the server to keep for the next case after case c ran on srv: none when it died
// (its log tail joins the case) or when the case's LoRA checks changed its adapters, which a
// later case must not inherit; either is stopped.
func (r *run) keepOrStop(c *suite.Case, spec *suite.Server, srv *server, cr *results.CaseResult) *server {
	if why := srv.dead(); why != "" {
		cr.LogTail = srv.log.lastLines(tailLines)
		r.stopServer(srv)
		return nil
	}
	if c.LoRA.ChangesAdapters() {
		r.logf("%s: stopping server %s: the case's LoRA checks changed its adapters, which a later case must not inherit", c.ID, spec.Name)
		r.stopServer(srv)
		return nil
	}
	return srv
}

// noteLoadClock says, once per run, that a server's load was not measured by SGLang's launcher
// line, and why; a line that could not be this host's clock is told each time.
func (r *run) noteLoadClock(id string, split loadSplit) {
	if split.launcher || split.missing && r.loadClockNoted {
		return
	}
	if split.missing {
		r.loadClockNoted = true
	}
	r.logf("%s: load clock: %s; load ends at the server's first answer of its health endpoint instead, "+
		"which includes its HTTP start-up (results.json load.clock \"health\")", id, split.fallback)
}

// startError is a failed server start; srv is nil when the process could not be launched.
// timedOut marks a server that was still starting when its start_timeout ran out.
type startError struct {
	srv      *server
	err      error
	timedOut bool
}

func (e *startError) Error() string { return e.err.Error() }
func (e *startError) Unwrap() error { return e.err }

// mediaToolsText is the run's ffmpeg probe (Options.Tools) in the form a builtin server takes
// it from media.ToolsEnv; "" when the run probed none (a zero Tools names no program: the
// server then probes).
func mediaToolsText(t media.Tools) string {
	if t.FFmpeg.Path == "" {
		return ""
	}
	text, err := t.MarshalText()
	if err != nil {
		return ""
	}
	return string(text)
}

// start launches a server for a case and waits until it is ready.
func (r *run) start(ctx context.Context, c *suite.Case, spec *suite.Server) (*server, time.Duration, error) {
	r.starts++
	dir := filepath.Join(r.opts.Out, results.ServersDir, fmt.Sprintf("%02d-%s", r.starts, spec.Name))
	r.logf("%s: starting server %s", c.ID, spec.Name)
	// Exclusively: a folder that exists already belongs to another server start, whose logs
	// this one must not overwrite.
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, 0, &startError{err: fmt.Errorf("create server folder: %w", err)}
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, 0, &startError{err: fmt.Errorf("create server folder: %w", err)}
	}
	var mirror io.Writer
	if r.opts.ServerLog != nil {
		mirror = r.opts.ServerLog(fmt.Sprintf("%s: server %s log (%s)", c.ID, spec.Name, filepath.Join(dir, "server.log")))
	}
	srv, err := startServer(spec, serverEnv{
		dir:        dir,
		suiteDir:   filepath.Dir(r.opts.Suite.Path),
		executable: r.opts.Executable,
		environ:    r.opts.Environ,
		mirror:     mirror,
		mediaTools: r.mediaTools,
	})
	if err != nil {
		return nil, 0, &startError{err: err}
	}
	r.servers = append(r.servers, srv)
	for _, n := range srv.notes {
		r.logf("%s: server %s: %s", c.ID, spec.Name, n)
	}
	r.startMemory(ctx, srv)
	stopBeat := r.beat(fmt.Sprintf("%s: starting server %s", c.ID, spec.Name), spec.StartTimeout, func() string { return lastLogLine(srv) })
	err = srv.waitReady(ctx, r.opts.HTTPClient)
	stopBeat()
	if err != nil {
		// Still running when the start timeout ran out: SGLang's TimeoutError (retryable).
		timedOut := ctx.Err() == nil && srv.dead() == "" && time.Since(srv.started) >= spec.StartTimeout
		r.stopServer(srv)
		tail := srv.log.lastLines(8)
		if len(tail) > 0 {
			err = fmt.Errorf("%w; last log lines:\n%s", err, strings.Join(tail, "\n"))
		}
		return nil, 0, &startError{srv: srv, err: err, timedOut: timedOut}
	}
	return srv, time.Since(srv.started), nil
}

// judged is the final verdict of a measured and validated request rr (judge.Config.Request;
// answered: the server answered it with an output), prev the request before it in its case
// (nil for the first); a memory growth it shows is said in the log.
func (r *run) judged(c *suite.Case, rr results.RequestResult, answered bool, prev *results.RequestResult) results.RequestResult {
	v := r.judge.Request(judge.Input{Case: c, Request: rr, Answered: answered, Previous: prev})
	for _, g := range v.Grew {
		d, _, _ := strings.Cut(g.Detail, "\n")
		r.logf("%s %s: %s: %s", c.ID, slotOf(rr), g.Name, d)
	}
	return v.Request
}

// record appends a finished request to requests.jsonl; a write failure is reported but does
// not stop the run (results.json still gets everything).
func (r *run) record(rr results.RequestResult) {
	kept := rr
	kept.Revised, kept.Revision = false, "" // marks of the line, not of the request
	key := requestKey{rr.Case, rr.Index, rr.Confirm}
	r.mu.Lock()
	r.finished[key] = kept
	delete(r.held, key)
	r.mu.Unlock()
	if err := r.rec.Request(rr); err != nil {
		r.logf("warning: %v", err)
		r.disk.note(err)
		r.mu.Lock()
		r.unsaved = append(r.unsaved, err.Error())
		r.lost++
		r.mu.Unlock()
	}
}

// hold keeps a measured request of case c whose validation is pending, prev the request
// before it, for the results.json that a cancel writes at once (snapshot), which judges it
// then as the cancel leaves it (validationCancelled); its line in requests.jsonl is written
// when it is judged (record), and replaces it.
func (r *run) hold(c *suite.Case, m measured, prev *results.RequestResult) {
	r.mu.Lock()
	r.held[requestKey{m.rr.Case, m.rr.Index, m.rr.Confirm}] = heldRequest{c, m, prev}
	r.mu.Unlock()
}

// heldRequest is a request held for the snapshot (hold).
type heldRequest struct {
	c    *suite.Case
	m    measured
	prev *results.RequestResult
}

// judgedAsCancelled is the verdict on the held request had the run been cancelled now.
func (h heldRequest) judgedAsCancelled(j *judge.Config) results.RequestResult {
	return j.Request(judge.Input{Case: h.c, Request: validationCancelled(h.m), Answered: h.m.answered, Previous: h.prev}).Request
}

// revise records again a request whose verdict a later event changed (confirmation, a
// cancelled retry), marked revised and saying what changed: the last line of a request in
// requests.jsonl is its final verdict, and a snapshot written on cancel takes it too.
func (r *run) revise(rr results.RequestResult, what string) {
	rr.Revised, rr.Revision = true, what
	r.record(rr)
}

func firstProblem(cs []results.Check) string {
	for _, c := range cs {
		if c.Status == results.Fail || c.Status == results.Error {
			d, _, _ := strings.Cut(c.Detail, "\n")
			return fmt.Sprintf("  %s: %s", c.Name, d)
		}
	}
	return ""
}

// notSent is a request that was never sent; it is a required request, so it fails its case.
func notSent(c *suite.Case, i int, why string) results.RequestResult {
	return results.RequestResult{
		Case: c.ID, Index: i, Of: c.Repeat, Status: results.Skip,
		Checks: []results.Check{{Name: results.ServerAlive, Status: results.Skip, Detail: why}},
	}
}

func cancelledRequest(c *suite.Case, i int, why string) results.RequestResult {
	return results.RequestResult{
		Case: c.ID, Index: i, Of: c.Repeat, Status: results.Cancelled,
		Checks: []results.Check{{Name: results.ServerAlive, Status: results.Cancelled, Detail: why}},
	}
}

// cancelledCase records every request of a case that a cancel kept from running.
func (r *run) cancelledCase(c *suite.Case, why string) results.CaseResult {
	cr := results.CaseResult{ID: c.ID, Server: c.Server, Lane: c.Lane, Modality: string(c.Modality), Status: results.Cancelled}
	for i := 1; i <= c.Repeat; i++ {
		cr.Requests = append(cr.Requests, cancelledRequest(c, i, why))
		r.record(cr.Requests[i-1])
	}
	return cr
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
