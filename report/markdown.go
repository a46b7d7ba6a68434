package report

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/diffusion-check/diffusion-check/checks"
)

// CommentLimit is GitHub's limit on the body of an issue comment, in characters. A comment
// is kept below it in bytes, which are never fewer than characters.
const CommentLimit = 65536

// Report is what the PR comment, the job summary and the JUnit file are rendered from: the
// merged results of one or more lanes (checks.Merge) and where they can be seen.
type Report struct {
	// Key tells apart the comments of several reports on one PR (a marker in the comment).
	Key string
	// Lanes holds the merged results, one per lane, statuses finalized.
	Lanes []checks.Result
	// Pending names lanes that are expected but have no results yet (shown as ⏳).
	Pending []string
	// RunURL and RunLabel (e.g. "run #123") link to the workflow run that made the results.
	RunURL, RunLabel string
	// FullURL links to the unabridged report (job summary or artifact) from a trimmed comment.
	FullURL string
	// Previous is the state the previous comment of this PR and key recorded, if any: it
	// tells what changed since and keeps the other lanes' verdicts in the header.
	Previous *State
}

// State is what a comment records about its run, hidden in the comment, so that the next
// run can say what changed and show the lanes that it did not run itself.
type State struct {
	Lanes []LaneState `json:"lanes"`
	// Failing names every request (lane/case/index) or case (lane/case) that did not pass.
	Failing []string `json:"failing,omitempty"`
	// Truncated marks a Failing list cut at maxStateFailing entries.
	Truncated bool `json:"truncated,omitempty"`
}

// LaneState is one lane's verdict as a comment header shows it.
type LaneState struct {
	Name     string        `json:"name"`
	Status   checks.Status `json:"status"`
	RunURL   string        `json:"run_url,omitempty"`
	RunLabel string        `json:"run_label,omitempty"`
}

// maxStateFailing bounds the hidden state, so that it never crowds out the report.
const maxStateFailing = 300

// Marker is the hidden line that identifies the comment of a key.
func Marker(key string) string { return "<!-- diffusion-check:" + key + " -->" }

const statePrefix = "<!-- diffusion-check-state:"

var stateRE = regexp.MustCompile(`<!-- diffusion-check-state:([A-Za-z0-9+/=]*) -->`)

// ParseState reads the state a comment recorded. A comment without one (or with one that
// does not decode: a hand-edited comment) has none: nil, no error, since the worst outcome
// is a report that cannot say what changed.
func ParseState(body string) *State {
	m := stateRE.FindStringSubmatch(body)
	if m == nil {
		return nil
	}
	data, err := base64.StdEncoding.DecodeString(m[1])
	if err != nil {
		return nil
	}
	var s State
	if json.Unmarshal(data, &s) != nil {
		return nil
	}
	return &s
}

// State returns what this report records for the next run: its lanes' verdicts (and those
// of the previous state's other lanes) and what did not pass.
func (r *Report) State() State {
	var s State
	for _, l := range r.headerLanes() {
		if l.Status != statusPending {
			s.Lanes = append(s.Lanes, l)
		}
	}
	s.Failing = failingKeys(r.Lanes)
	if len(s.Failing) > maxStateFailing {
		s.Failing, s.Truncated = s.Failing[:maxStateFailing], true
	}
	return s
}

func (s State) encode() string {
	data, _ := json.Marshal(s) // a State always marshals
	return statePrefix + base64.StdEncoding.EncodeToString(data) + " -->"
}

const statusPending checks.Status = "pending"

// headerLanes is the lanes the header shows: this report's, the pending ones, then the other
// lanes the previous comment knew.
func (r *Report) headerLanes() []LaneState {
	var out []LaneState
	have := map[string]bool{}
	for _, l := range r.Lanes {
		out = append(out, LaneState{Name: l.Lane, Status: l.Status, RunURL: r.RunURL, RunLabel: r.RunLabel})
		have[l.Lane] = true
	}
	for _, p := range r.Pending {
		if !have[p] {
			out = append(out, LaneState{Name: p, Status: statusPending, RunURL: r.RunURL, RunLabel: r.RunLabel})
			have[p] = true
		}
	}
	if r.Previous != nil {
		for _, l := range r.Previous.Lanes {
			if !have[l.Name] {
				out = append(out, l)
				have[l.Name] = true
			}
		}
	}
	return out
}

// failingKeys names what did not pass: lane/case/index for requests, lane/case for cases
// that failed without a failed request (a server that did not start).
func failingKeys(lanes []checks.Result) []string {
	var out []string
	for _, l := range lanes {
		for _, c := range l.Cases {
			if !bad(c.Status) {
				continue
			}
			n := 0
			for _, rr := range c.Requests {
				if bad(rr.Status) {
					out = append(out, fmt.Sprintf("%s/%s/%d", l.Lane, c.ID, rr.Index))
					n++
				}
			}
			if n == 0 {
				out = append(out, l.Lane+"/"+c.ID)
			}
		}
	}
	return out
}

// bad is a status that makes a lane red (or unknown): everything but pass, known and skip.
func bad(s checks.Status) bool {
	return s != checks.Pass && s != checks.Known && s != checks.Skip
}

// Comment renders the PR comment: the marker, the hidden state, and the report trimmed in
// steps until the whole body stays under CommentLimit.
func Comment(r *Report) string {
	head := Marker(r.Key) + "\n" + r.State().encode() + "\n"
	return head + markdown(r, CommentLimit-len(head)-1, fullInSummary(r.FullURL))
}

func fullInSummary(url string) string {
	if url == "" {
		return "The full report is in the job summary of the run."
	}
	return "The full report is in the [job summary](" + url + ")."
}

// Markdown renders the report in GitHub-flavoured Markdown. With limit > 0 it returns the
// most complete rendering shorter than limit bytes, degrading in steps — collapse detail,
// drop passing rows, truncate logs, drop detail — and saying so at the top, so that Markdown
// is never cut in the middle of a table or a tag. limit ≤ 0 renders everything.
func Markdown(r *Report, limit int) string {
	return markdown(r, limit, fullInSummary(r.FullURL))
}

// markdown is Markdown with where, in a trimmed report, the full one is.
func markdown(r *Report, limit int, where string) string {
	var out string
	for _, lv := range levels {
		out = render(r, lv, where)
		if limit <= 0 || len(out) < limit {
			return out
		}
	}
	return out // the last level is a few lines per lane; it fits any limit worth having
}

// level says how much of the report to render.
type level struct {
	trimmed      string // what was left out, for the note at the top; "" for the full report
	crossAll     bool   // cross-request view for passing cases too
	passingRows  bool   // passing requests in the per-request table
	maxBlock     int    // lines kept of a multi-line detail or a log tail (0: all)
	mermaid      bool   // the E2E chart per failing case
	notes        bool   // possible improvements and snippets of passing cases
	detailBlocks bool   // multi-line details and log tails at all
	cross        bool   // the cross-request view at all
	maxRows      int    // rows of the per-request table (0: all)
	maxDetails   int    // failing cases with a details block (0: all)
	knownTable   bool   // the known-failure table
	tables       bool   // per-request tables at all
}

var levels = []level{
	{crossAll: true, passingRows: true, mermaid: true, notes: true, detailBlocks: true, cross: true, knownTable: true, tables: true},
	{trimmed: "detail collapsed", passingRows: true, maxBlock: 40, mermaid: true, notes: true, detailBlocks: true, cross: true, knownTable: true, tables: true},
	{trimmed: "detail collapsed, passing requests left out", maxBlock: 40, mermaid: true, notes: true, detailBlocks: true, cross: true, knownTable: true, tables: true},
	{trimmed: "detail collapsed, passing requests left out, logs truncated", maxBlock: 10, detailBlocks: true, cross: true, knownTable: true, tables: true},
	{trimmed: "passing requests left out, logs truncated, cross-request view left out", maxBlock: 10, detailBlocks: true, knownTable: true, tables: true},
	{trimmed: "passing requests, logs and long details left out", knownTable: true, tables: true},
	{trimmed: "only the first failing requests shown", maxRows: 100, maxDetails: 20, knownTable: true, tables: true},
	{trimmed: "only the first failing requests shown", maxRows: 25, maxDetails: 5, tables: true},
	{trimmed: "only the verdict shown"},
}

// render writes the whole report at one level of detail.
func render(r *Report, lv level, where string) string {
	var b strings.Builder
	header(&b, r)
	if lv.trimmed != "" {
		fmt.Fprintf(&b, "\n> [!NOTE]\n> Trimmed to fit GitHub's size limit (%s). %s\n", lv.trimmed, where)
	}
	multi := len(r.Lanes) > 1
	for _, l := range r.Lanes {
		if multi || len(r.Lanes[0].Cases) > 0 {
			fmt.Fprintf(&b, "\n### %s %s\n", icon(l.Status), laneTitle(l))
		}
		for _, e := range l.Errors {
			fmt.Fprintf(&b, "\n> [!WARNING]\n> %s\n", quoteLines(e))
		}
		if lv.tables {
			requestTable(&b, &l, lv)
		}
		if lv.cross {
			crossRequest(&b, &l, lv)
		}
	}
	if lv.knownTable {
		knownFailures(&b, r.Lanes)
	}
	if lv.tables {
		details(&b, r.Lanes, lv)
	}
	if lv.notes {
		notes(&b, r.Lanes, lv)
	}
	return b.String()
}

func laneTitle(l checks.Result) string {
	s := "Lane " + l.Lane
	var extra []string
	if l.GPU != "" {
		extra = append(extra, l.GPU)
	}
	if l.Partition.Total > 1 {
		extra = append(extra, plural(l.Partition.Total, "partition"))
	}
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	return s
}

// icon is a status at a glance.
func icon(s checks.Status) string {
	switch s {
	case checks.Pass:
		return "✅"
	case checks.Fail:
		return "❌"
	case checks.Known:
		return "🟡"
	case checks.Skip:
		return "⏭️"
	case checks.Cancelled:
		return "🚫"
	case statusPending:
		return "⏳"
	}
	return "⛔" // error, or a status that is not ours
}

// header: the verdict, the lanes with their runs, GPU, commit, counts and what changed.
func header(b *strings.Builder, r *Report) {
	worst := worstStatus(r.Lanes)
	n := count(r.Lanes)
	fmt.Fprintf(b, "## %s diffusion-check: %s\n\n", icon(worst), headline(worst, n))
	var lanes []string
	for _, l := range r.headerLanes() {
		s := "**" + mdEscape(l.Name) + "** " + icon(l.Status)
		if l.Status == statusPending {
			s += " running"
		} else if l.RunURL != "" {
			s += " [" + mdEscape(cmp.Or(l.RunLabel, "run")) + "](" + l.RunURL + ")"
		}
		lanes = append(lanes, s)
	}
	if len(lanes) > 0 {
		b.WriteString(strings.Join(lanes, " · ") + "\n\n")
	}
	var facts []string
	if g := distinct(r.Lanes, func(l checks.Result) string { return l.GPU }); g != "" {
		facts = append(facts, "GPU **"+mdEscape(g)+"**")
	}
	if c := distinct(r.Lanes, func(l checks.Result) string { return shortSHA(l.Commit) }); c != "" {
		facts = append(facts, "commit `"+c+"`")
	}
	facts = append(facts, plural(n.cases, "case"), plural(n.requests, "request"),
		fmt.Sprintf("%d failed", n.failed), fmt.Sprintf("%d known", n.known), fmt.Sprintf("%d skipped", n.skipped))
	if n.cancelled > 0 {
		facts = append(facts, fmt.Sprintf("%d cancelled", n.cancelled))
	}
	b.WriteString(strings.Join(facts, " · ") + "\n")
	if r.Previous != nil {
		changes(b, r)
	}
}

type counts struct{ cases, requests, failed, known, skipped, cancelled, passed int }

func count(lanes []checks.Result) counts {
	t := checks.TallyRequests(lanes...)
	n := counts{requests: t.Total(), failed: t.Failed(), known: t[checks.Known], skipped: t[checks.Skip],
		cancelled: t[checks.Cancelled], passed: t[checks.Pass]}
	for _, l := range lanes {
		n.cases += len(l.Cases)
	}
	return n
}

func headline(worst checks.Status, n counts) string {
	switch worst {
	case checks.Pass:
		return fmt.Sprintf("all %s passed", plural(n.requests, "request"))
	case checks.Known:
		return fmt.Sprintf("passed, with %s", plural(n.known, "known failure"))
	case checks.Fail:
		return fmt.Sprintf("%d of %s failed", n.failed, plural(n.requests, "request"))
	case checks.Cancelled:
		return "cancelled"
	case checks.Skip:
		return "skipped"
	}
	return "could not check everything"
}

// worstStatus orders as the verdict rules do: fail > error > cancelled > known > pass.
func worstStatus(lanes []checks.Result) checks.Status {
	rank := func(s checks.Status) int {
		return map[checks.Status]int{checks.Pass: 1, checks.Skip: 0, checks.Known: 2, checks.Cancelled: 3, checks.Error: 4, checks.Fail: 5}[s]
	}
	w := checks.Pass
	if len(lanes) == 0 {
		return checks.Error
	}
	for _, l := range lanes {
		s := l.Status
		if _, ok := map[checks.Status]bool{checks.Pass: true, checks.Skip: true, checks.Known: true, checks.Cancelled: true, checks.Error: true, checks.Fail: true}[s]; !ok {
			s = checks.Fail
		}
		if rank(s) > rank(w) {
			w = s
		}
	}
	return w
}

// changes says what failed or was fixed since the previous comment.
func changes(b *strings.Builder, r *Report) {
	prev := map[string]bool{}
	for _, k := range r.Previous.Failing {
		prev[k] = true
	}
	lanes := map[string]bool{}
	for _, l := range r.Lanes {
		lanes[l.Lane] = true
	}
	now := failingKeys(r.Lanes)
	cur := map[string]bool{}
	var newly, fixed []string
	for _, k := range now {
		cur[k] = true
		if !prev[k] {
			newly = append(newly, k)
		}
	}
	for _, k := range r.Previous.Failing {
		lane, _, _ := strings.Cut(k, "/")
		if lanes[lane] && !cur[k] {
			fixed = append(fixed, k)
		}
	}
	if len(newly) == 0 && len(fixed) == 0 {
		b.WriteString("\nSince the previous run: no change in what fails.\n")
		return
	}
	var parts []string
	if len(newly) > 0 {
		parts = append(parts, fmt.Sprintf("**%d newly failing** (%s)", len(newly), keyList(newly)))
	}
	if len(fixed) > 0 {
		s := fmt.Sprintf("**%d fixed** (%s)", len(fixed), keyList(fixed))
		if r.Previous.Truncated {
			s += ", perhaps more"
		}
		parts = append(parts, s)
	}
	b.WriteString("\nSince the previous run: " + strings.Join(parts, ", ") + ".\n")
}

// keyList shows the first few lane/case/index keys as "case i/…".
func keyList(keys []string) string {
	const show = 5
	var out []string
	for i, k := range keys {
		if i == show {
			out = append(out, fmt.Sprintf("and %d more", len(keys)-show))
			break
		}
		parts := strings.Split(k, "/")
		s := "`" + strings.Join(parts[1:2], "") + "`"
		if len(parts) > 2 {
			s += " request " + parts[2]
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

func distinct(lanes []checks.Result, f func(checks.Result) string) string {
	var vs []string
	for _, l := range lanes {
		if v := f(l); v != "" && !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	return strings.Join(vs, ", ")
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// row is one line of the per-request table.
type row struct {
	c  *checks.CaseResult
	rr *checks.RequestResult // nil for a case that ran no request
}

func severity(s checks.Status) int {
	switch s {
	case checks.Fail:
		return 0
	case checks.Error:
		return 1
	case checks.Cancelled:
		return 2
	case checks.Known:
		return 4
	case checks.Skip:
		return 5
	case checks.Pass:
		return 6
	}
	return 0 // not ours: as bad as a failure
}

func rowStatus(x row) checks.Status {
	if x.rr == nil {
		return x.c.Status
	}
	return x.rr.Status
}

// requestTable is the per-request table of a lane, failing rows first.
func requestTable(b *strings.Builder, l *checks.Result, lv level) {
	var rows []row
	for i := range l.Cases {
		c := &l.Cases[i]
		if len(c.Requests) == 0 {
			rows = append(rows, row{c: c})
			continue
		}
		for j := range c.Requests {
			rows = append(rows, row{c: c, rr: &c.Requests[j]})
		}
	}
	slices.SortStableFunc(rows, func(a, b row) int { return cmp.Compare(severity(rowStatus(a)), severity(rowStatus(b))) })
	hidden := 0
	if !lv.passingRows {
		kept := rows[:0:0]
		for _, x := range rows {
			if rowStatus(x) == checks.Pass {
				hidden++
				continue
			}
			kept = append(kept, x)
		}
		rows = kept
	}
	more := 0
	if lv.maxRows > 0 && len(rows) > lv.maxRows {
		more = len(rows) - lv.maxRows
		rows = rows[:lv.maxRows]
	}
	if len(rows) > 0 {
		b.WriteString("\n| | Case | Request | E2E | Slowest stage | VRAM load · runtime | min SSIM · PSNR | Audio | Other checks |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
		for _, x := range rows {
			writeRow(b, x)
		}
	}
	if hidden > 0 || more > 0 {
		var s []string
		if more > 0 {
			s = append(s, plural(more, "more request")+" that did not pass")
		}
		if hidden > 0 {
			s = append(s, plural(hidden, "passing request"))
		}
		fmt.Fprintf(b, "\n_%s not shown._\n", strings.Join(s, " and "))
	}
}

// columns names the checks that have a column of their own; the others are listed in "Other".
func inColumn(name string) bool {
	return name == "perf.e2e" || strings.HasPrefix(name, "perf.stage.") ||
		name == "memory.load_peak" || name == "memory.runtime_peak" ||
		name == "consistency.ssim" || name == "consistency.psnr" || strings.HasPrefix(name, "audio.")
}

func writeRow(b *strings.Builder, x row) {
	st := rowStatus(x)
	cells := []string{icon(st), "`" + cellEscape(x.c.ID) + "`"}
	if x.rr == nil {
		cells = append(cells, "—", "—", "—", cellVRAM(x.c, nil), "—", "—")
		var other []string
		for _, ck := range x.c.Checks {
			if ck.Status != checks.Pass && ck.Status != checks.Skip {
				other = append(other, checkTag(ck))
			}
		}
		if len(x.c.Errors) > 0 {
			other = append(other, plural(len(x.c.Errors), "error"))
		}
		if len(other) == 0 {
			other = append(other, "no requests ran")
		}
		cells = append(cells, strings.Join(other, ", "))
	} else {
		rr := x.rr
		cells = append(cells, fmt.Sprintf("%d/%d", rr.Index, rr.Of), cellE2E(rr), cellStage(rr), cellVRAM(x.c, rr), cellConsistency(rr), cellAudio(rr))
		var other []string
		for _, ck := range rr.Checks {
			if !inColumn(ck.Name) && ck.Status != checks.Pass && ck.Status != checks.Skip {
				other = append(other, checkTag(ck))
			}
		}
		if len(other) == 0 && rr.Status == checks.Skip {
			other = append(other, "skipped")
		}
		cells = append(cells, cmp.Or(strings.Join(other, ", "), "—"))
	}
	b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
}

// checkTag is a check's name with its status when it did not pass.
func checkTag(ck checks.Check) string {
	return icon(ck.Status) + " `" + cellEscape(ck.Name) + "`"
}

// findCheck returns the most telling check among those with name (or prefix, with a trailing
// "."): a failure over a pass, then the one closest to its limit.
func findCheck(cs []checks.Check, match func(string) bool) *checks.Check {
	var best *checks.Check
	for i := range cs {
		ck := &cs[i]
		if !match(ck.Name) {
			continue
		}
		if best == nil || better(ck, best) {
			best = ck
		}
	}
	return best
}

func better(a, b *checks.Check) bool {
	if sa, sb := severity(a.Status), severity(b.Status); sa != sb {
		return sa < sb
	}
	return closeness(a) > closeness(b)
}

// closeness is how near a value is to its limit (1: at the limit, above: beyond it).
func closeness(ck *checks.Check) float64 {
	if ck.Value == nil {
		return -1
	}
	if ck.Limit == nil || *ck.Limit == 0 {
		return 0
	}
	if higherIsBetter(ck.Name) {
		if *ck.Value == 0 {
			return 1e9
		}
		return *ck.Limit / *ck.Value
	}
	return *ck.Value / *ck.Limit
}

// higherIsBetter: similarity metrics have a lower limit (≥); times, memory and differences
// an upper one (≤).
func higherIsBetter(name string) bool {
	for _, s := range []string{"ssim", "psnr", "clip", "similarity", "correlation"} {
		if strings.Contains(name, s) {
			return true
		}
	}
	return false
}

func named(n string) func(string) bool { return func(s string) bool { return s == n } }

func prefixed(p string) func(string) bool {
	return func(s string) bool { return strings.HasPrefix(s, p) }
}

func cellE2E(rr *checks.RequestResult) string {
	if ck := findCheck(rr.Checks, named("perf.e2e")); ck != nil && ck.Value != nil {
		return checkValue(ck, true)
	}
	if rr.E2EMs > 0 {
		return fmtValue(rr.E2EMs, "ms", "perf.e2e")
	}
	return "—"
}

func cellStage(rr *checks.RequestResult) string {
	if ck := findCheck(rr.Checks, prefixed("perf.stage.")); ck != nil && ck.Value != nil {
		return stageName(strings.TrimPrefix(ck.Name, "perf.stage.")) + " " + checkValue(ck, true)
	}
	var slow *checks.Stage
	for i := range rr.Stages {
		if slow == nil || rr.Stages[i].Ms > slow.Ms {
			slow = &rr.Stages[i]
		}
	}
	if slow == nil {
		return "—"
	}
	return stageName(slow.Name) + " " + fmtValue(slow.Ms, "ms", "perf.stage")
}

func stageName(s string) string { return cellEscape(cmp.Or(strings.TrimSuffix(s, "Stage"), s)) }

func cellVRAM(c *checks.CaseResult, rr *checks.RequestResult) string {
	load := findCheck(c.Checks, named("memory.load_peak"))
	if load == nil && rr != nil {
		load = findCheck(rr.Checks, named("memory.load_peak"))
	}
	var parts []string
	switch {
	case load != nil && load.Value != nil:
		parts = append(parts, checkValue(load, true))
	case c.Load != nil && len(c.Load.PeakVRAMMiB) > 0:
		parts = append(parts, fmtValue(maxOf(c.Load.PeakVRAMMiB), "MiB", ""))
	default:
		parts = append(parts, "—")
	}
	if rr == nil {
		return parts[0]
	}
	run := findCheck(rr.Checks, named("memory.runtime_peak"))
	switch {
	case run != nil && run.Value != nil:
		parts = append(parts, checkValue(run, true))
	case len(rr.PeakVRAMMiB) > 0:
		parts = append(parts, fmtValue(maxOf(rr.PeakVRAMMiB), "MiB", ""))
	default:
		parts = append(parts, "—")
	}
	return strings.Join(parts, " · ")
}

func maxOf(m map[string]float64) float64 {
	v := 0.0
	for _, x := range m {
		v = max(v, x)
	}
	return v
}

func cellConsistency(rr *checks.RequestResult) string {
	ssim := findCheck(rr.Checks, named("consistency.ssim"))
	psnr := findCheck(rr.Checks, named("consistency.psnr"))
	if ssim == nil && psnr == nil {
		return "—"
	}
	part := func(ck *checks.Check) string {
		if ck == nil {
			return "—"
		}
		if ck.Value == nil {
			return icon(ck.Status)
		}
		return checkValue(ck, true)
	}
	return part(ssim) + " · " + part(psnr)
}

func cellAudio(rr *checks.RequestResult) string {
	var bad []string
	seen, known := false, false
	for _, ck := range rr.Checks {
		if !strings.HasPrefix(ck.Name, "audio.") {
			continue
		}
		seen = true
		switch ck.Status {
		case checks.Pass, checks.Skip:
		case checks.Known:
			known = true
		default:
			bad = append(bad, icon(ck.Status)+" "+cellEscape(strings.TrimPrefix(ck.Name, "audio.")))
		}
	}
	switch {
	case len(bad) > 0:
		return strings.Join(bad, ", ")
	case known:
		return icon(checks.Known)
	case seen:
		return icon(checks.Pass)
	}
	return "—"
}

// checkValue is a check's value in a table cell; a value that did not pass is marked and
// shows its limit (withLimit shows it for passing values too).
func checkValue(ck *checks.Check, withLimit bool) string {
	v := fmtValue(*ck.Value, ck.Unit, ck.Name)
	lim := ""
	if ck.Limit != nil {
		lim = limitText(ck)
	}
	switch ck.Status {
	case checks.Pass, checks.Skip:
		if withLimit && lim != "" {
			return v + " (" + lim + ")"
		}
		return v
	case checks.Known:
		v = "🟡 " + v
	default:
		v = "**" + icon(ck.Status) + " " + v + "**"
	}
	if lim != "" {
		v += " (" + lim + ")"
	}
	return v
}

func limitText(ck *checks.Check) string {
	op := "≤"
	if higherIsBetter(ck.Name) {
		op = "≥"
	}
	return op + " " + fmtValue(*ck.Limit, ck.Unit, ck.Name)
}

// fmtValue shows a measurement in its unit: times over a second in seconds, memory in whole
// MiB, similarity to four decimals.
func fmtValue(v float64, unit, name string) string {
	switch unit {
	case "ms":
		if v >= 1000 || v <= -1000 {
			return strconv.FormatFloat(v/1000, 'f', 1, 64) + " s"
		}
		return strconv.FormatFloat(v, 'f', 1, 64) + " ms"
	case "MiB", "MB", "mb":
		return strconv.FormatFloat(v, 'f', 0, 64) + " MiB"
	case "dB", "db":
		return strconv.FormatFloat(v, 'f', 2, 64) + " dB"
	case "s":
		return strconv.FormatFloat(v, 'f', 2, 64) + " s"
	case "":
		if strings.Contains(name, "ssim") || strings.Contains(name, "similarity") || strings.Contains(name, "correlation") {
			return strconv.FormatFloat(v, 'f', 4, 64)
		}
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	return strconv.FormatFloat(v, 'g', 6, 64) + " " + cellEscape(unit)
}

// metric is one row of the cross-request view: a check name (with its source when a check
// is measured from several).
type metric struct{ name, source string }

func (m metric) label() string {
	s := strings.TrimPrefix(m.name, "perf.")
	if m.name == checks.PerfRecord {
		s = "server total" // the value of perf.record is the record's total_duration_ms
	}
	if m.source != "" {
		s += " (" + m.source + ")"
	}
	return cellEscape(s)
}

// crossRequest is, per case with ≥ 2 requests, one row per metric: its value on every
// request and its limit, so drift between the cold and the warm request shows.
func crossRequest(b *strings.Builder, l *checks.Result, lv level) {
	var cases []*checks.CaseResult
	width := 0
	for i := range l.Cases {
		c := &l.Cases[i]
		if len(c.Requests) < 2 || (!lv.crossAll && !bad(c.Status)) {
			continue
		}
		cases = append(cases, c)
		width = max(width, len(c.Requests))
	}
	if len(cases) == 0 {
		return
	}
	slices.SortStableFunc(cases, func(a, b *checks.CaseResult) int { return cmp.Compare(severity(a.Status), severity(b.Status)) })
	b.WriteString("\n<details><summary>Across requests: " + plural(len(cases), "case") + " with repeated requests</summary>\n\n")
	b.WriteString("| Case | Metric |")
	for i := 1; i <= width; i++ {
		fmt.Fprintf(b, " %d |", i)
	}
	b.WriteString(" Limit |\n|---|---|" + strings.Repeat("---|", width) + "---|\n")
	for _, c := range cases {
		for _, m := range caseMetrics(c) {
			fmt.Fprintf(b, "| `%s` | %s |", cellEscape(c.ID), m.label())
			limit := ""
			for i := 0; i < width; i++ {
				cell := ""
				if i < len(c.Requests) {
					cell = "—"
					rr := &c.Requests[i]
					if ck := metricCheck(rr, m); ck != nil && ck.Value != nil {
						cell = checkValue(ck, false)
						if ck.Limit != nil && limit == "" {
							limit = limitText(ck)
						}
						if ck.Status != checks.Pass && ck.Status != checks.Skip {
							cell = strings.TrimSuffix(cell, " ("+limitText(ck)+")")
						}
					} else if m.name == "perf.e2e" && rr.E2EMs > 0 {
						cell = fmtValue(rr.E2EMs, "ms", m.name)
					}
				}
				b.WriteString(" " + cell + " |")
			}
			b.WriteString(" " + cmp.Or(limit, "—") + " |\n")
		}
	}
	b.WriteString("\n</details>\n")
}

func metricCheck(rr *checks.RequestResult, m metric) *checks.Check {
	for i := range rr.Checks {
		if rr.Checks[i].Name == m.name && rr.Checks[i].Source == m.source {
			return &rr.Checks[i]
		}
	}
	return nil
}

// caseMetrics: E2E always, then every measured check in first-seen order, leaving out the
// per-stage and per-step timings unless one of them did not pass.
func caseMetrics(c *checks.CaseResult) []metric {
	out := []metric{{name: "perf.e2e"}}
	seen := map[metric]bool{out[0]: true}
	failing := map[metric]bool{}
	for _, rr := range c.Requests {
		for _, ck := range rr.Checks {
			if ck.Status != checks.Pass && ck.Status != checks.Skip {
				failing[metric{ck.Name, ck.Source}] = true
			}
		}
	}
	for _, rr := range c.Requests {
		for _, ck := range rr.Checks {
			m := metric{ck.Name, ck.Source}
			if seen[m] || ck.Value == nil {
				continue
			}
			if (strings.HasPrefix(ck.Name, "perf.stage.") || strings.HasPrefix(ck.Name, "perf.step.")) && !failing[m] {
				continue
			}
			seen[m] = true
			out = append(out, m)
		}
	}
	return out
}

// knownFailures lists every check that matched a known-failures entry: still failing, fixed
// (remove the entry) or expired (counts as a failure).
func knownFailures(b *strings.Builder, lanes []checks.Result) {
	type entry struct {
		lane, caseID, check string
		reqs                []string
		k                   *checks.KnownFailure
	}
	var entries []*entry
	index := map[string]*entry{}
	add := func(lane, caseID, req string, ck checks.Check) {
		if ck.Known == nil {
			return
		}
		key := lane + "\x00" + caseID + "\x00" + ck.Name + "\x00" + ck.Known.State
		e := index[key]
		if e == nil {
			e = &entry{lane: lane, caseID: caseID, check: ck.Name, k: ck.Known}
			index[key] = e
			entries = append(entries, e)
		}
		if req != "" {
			e.reqs = append(e.reqs, req)
		}
	}
	for _, l := range lanes {
		for _, c := range l.Cases {
			for _, ck := range c.Checks {
				add(l.Lane, c.ID, "", ck)
			}
			for _, rr := range c.Requests {
				for _, ck := range rr.Checks {
					add(l.Lane, c.ID, strconv.Itoa(rr.Index), ck)
				}
			}
		}
	}
	if len(entries) == 0 {
		return
	}
	rank := map[string]int{"expired": 0, "fixed": 1, "known": 2}
	slices.SortStableFunc(entries, func(a, b *entry) int { return cmp.Compare(rank[a.k.State], rank[b.k.State]) })
	b.WriteString("\n### Known failures\n\n| | Case | Requests | Check | Reason | Until | State |\n|---|---|---|---|---|---|---|\n")
	for _, e := range entries {
		ic, state := "🟡", "known: reported, not red"
		switch e.k.State {
		case "fixed":
			ic, state = "✅", "**now passes: remove it from the list**"
		case "expired":
			ic, state = "❌", "**expired: counts as a failure**"
		case "known":
		default:
			ic, state = "⛔", cellEscape(e.k.State)
		}
		reason := cellEscape(e.k.Reason)
		if e.k.Link != "" {
			reason += " ([link](" + e.k.Link + "))"
		}
		reqs := cmp.Or(strings.Join(e.reqs, ", "), "case")
		fmt.Fprintf(b, "| %s | `%s` | %s | `%s` | %s | %s | %s |\n", ic, cellEscape(e.caseID), reqs, cellEscape(e.check), reason, cmp.Or(cellEscape(e.k.Until), "—"), state)
	}
}

// details is a collapsible block per case that did not pass: every check that did not pass
// with value, limit, baseline and tolerance; multi-line details; the server log tail; and a
// chart of E2E per request.
func details(b *strings.Builder, lanes []checks.Result, lv level) {
	shown, more := 0, 0
	for _, l := range lanes {
		for i := range l.Cases {
			c := &l.Cases[i]
			if !bad(c.Status) {
				continue
			}
			if lv.maxDetails > 0 && shown >= lv.maxDetails {
				more++
				continue
			}
			if shown == 0 {
				b.WriteString("\n### Failures\n")
			}
			shown++
			caseDetails(b, l.Lane, len(lanes) > 1, c, lv)
		}
	}
	if more > 0 {
		fmt.Fprintf(b, "\n_%s not shown._\n", plural(more, "more failing case"))
	}
}

type located struct {
	req string // "2/3", or "case"
	ck  checks.Check
}

func caseDetails(b *strings.Builder, lane string, showLane bool, c *checks.CaseResult, lv level) {
	nbad := 0
	for _, rr := range c.Requests {
		if bad(rr.Status) {
			nbad++
		}
	}
	title := "<code>" + htmlEscape(c.ID) + "</code>"
	if showLane {
		title += " (" + htmlEscape(lane) + ")"
	}
	what := fmt.Sprintf("%d of %d requests did not pass", nbad, len(c.Requests))
	if len(c.Requests) == 0 {
		what = "no requests ran"
	}
	fmt.Fprintf(b, "\n<details><summary>%s %s: %s</summary>\n\n", icon(c.Status), title, what)
	var failed []located
	for _, ck := range c.Checks {
		if ck.Status != checks.Pass && ck.Status != checks.Skip {
			failed = append(failed, located{"case", ck})
		}
	}
	for _, rr := range c.Requests {
		for _, ck := range rr.Checks {
			if ck.Status != checks.Pass && ck.Status != checks.Skip {
				failed = append(failed, located{fmt.Sprintf("%d/%d", rr.Index, rr.Of), ck})
			}
		}
		if rr.Status == checks.Skip || (rr.Status == checks.Cancelled && len(rr.Checks) == 0) {
			failed = append(failed, located{fmt.Sprintf("%d/%d", rr.Index, rr.Of), checks.Check{Name: "request", Status: rr.Status, Detail: string(rr.Status) + because(rr.Checks)}})
		}
	}
	if len(failed) > 0 {
		b.WriteString("| Request | Check | Status | Value | Limit | Baseline | Tolerance | Source | Detail |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, f := range failed {
			ck := f.ck
			detail, block := splitDetail(ck.Detail)
			if block != "" {
				detail = cmp.Or(detail, "see below")
			}
			fmt.Fprintf(b, "| %s | `%s` | %s %s | %s | %s | %s | %s | %s | %s |\n", f.req, cellEscape(ck.Name), icon(ck.Status), ck.Status,
				optValue(ck.Value, ck), optLimit(ck), optValue(ck.Baseline, ck), tolerance(ck), cmp.Or(cellEscape(ck.Source), "—"), cmp.Or(cellEscape(detail), "—"))
		}
	}
	for _, e := range c.Errors {
		fmt.Fprintf(b, "\n- error: %s\n", cellEscape(firstLine(e)))
	}
	if lv.detailBlocks {
		for _, f := range failed {
			if _, block := splitDetail(f.ck.Detail); block != "" {
				fmt.Fprintf(b, "\n**%s · `%s`**\n\n", f.req, cellEscape(f.ck.Name))
				codeBlock(b, "text", block, lv.maxBlock)
			}
		}
		if len(c.LogTail) > 0 {
			b.WriteString("\n**Server log tail**\n\n")
			codeBlock(b, "text", strings.Join(c.LogTail, "\n"), lv.maxBlock)
		}
	}
	if lv.mermaid && len(c.Requests) >= 2 {
		mermaidE2E(b, c)
	}
	b.WriteString("\n</details>\n")
}

// splitDetail keeps a one-line detail for a table cell; a multi-line one (a log excerpt, a
// paste-ready baseline snippet) goes into a code block under the table, its first line kept.
func splitDetail(d string) (line, block string) {
	d = strings.TrimRight(d, "\n")
	if !strings.Contains(d, "\n") {
		return d, ""
	}
	first, _, _ := strings.Cut(d, "\n")
	return first, d
}

func firstLine(s string) string {
	f, _, _ := strings.Cut(strings.TrimRight(s, "\n"), "\n")
	return f
}

func optValue(v *float64, ck checks.Check) string {
	if v == nil {
		return "—"
	}
	return fmtValue(*v, ck.Unit, ck.Name)
}

func optLimit(ck checks.Check) string {
	if ck.Limit == nil {
		return "—"
	}
	return limitText(&ck)
}

func tolerance(ck checks.Check) string {
	var parts []string
	if ck.Tolerance != nil {
		parts = append(parts, "+"+strconv.FormatFloat(*ck.Tolerance*100, 'g', 4, 64)+" %")
	}
	if ck.Pad != nil {
		parts = append(parts, "pad "+fmtValue(*ck.Pad, ck.Unit, ck.Name))
	}
	return cmp.Or(strings.Join(parts, ", "), "—")
}

// codeBlock writes s fenced so that no backtick run inside can close it, keeping the last
// maxLines lines (0: all) — a log's end is where the failure is.
func codeBlock(b *strings.Builder, lang, s string, maxLines int) {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if maxLines > 0 && len(lines) > maxLines {
		cut := len(lines) - maxLines
		lines = append([]string{fmt.Sprintf("… %d earlier lines left out", cut)}, lines[cut:]...)
	}
	body := strings.Join(lines, "\n")
	fence := "```"
	for strings.Contains(body, fence) {
		fence += "`"
	}
	b.WriteString(fence + lang + "\n" + body + "\n" + fence + "\n")
}

// mermaidE2E charts E2E per request, with the limit as a line when there is one.
func mermaidE2E(b *strings.Builder, c *checks.CaseResult) {
	var xs, ys, lim []string
	hasLimit := true
	for _, rr := range c.Requests {
		v := rr.E2EMs
		ck := findCheck(rr.Checks, named("perf.e2e"))
		if ck != nil && ck.Value != nil {
			v = *ck.Value
		}
		xs = append(xs, strconv.Itoa(rr.Index))
		ys = append(ys, strconv.FormatFloat(v/1000, 'f', 2, 64))
		if ck != nil && ck.Limit != nil {
			lim = append(lim, strconv.FormatFloat(*ck.Limit/1000, 'f', 2, 64))
		} else {
			hasLimit = false
		}
	}
	b.WriteString("\n```mermaid\nxychart-beta\n    title \"E2E per request (s)\"\n")
	b.WriteString("    x-axis \"request\" [" + strings.Join(xs, ", ") + "]\n")
	b.WriteString("    y-axis \"seconds\"\n")
	b.WriteString("    bar [" + strings.Join(ys, ", ") + "]\n")
	if hasLimit {
		b.WriteString("    line [" + strings.Join(lim, ", ") + "]\n")
	}
	b.WriteString("```\n")
}

// notes lists possible improvements (Check.Note) and the multi-line details of checks that
// are not in a failure block, such as paste-ready baseline snippets for missing scenarios.
func notes(b *strings.Builder, lanes []checks.Result, lv level) {
	type note struct {
		where, name, text, block string
	}
	var ns []note
	for _, l := range lanes {
		for _, c := range l.Cases {
			failingCase := bad(c.Status)
			collect := func(req string, ck checks.Check) {
				where := "`" + cellEscape(c.ID) + "`"
				if req != "" {
					where += " request " + req
				}
				if ck.Note != "" {
					ns = append(ns, note{where: where, name: ck.Name, text: ck.Note})
				}
				failingCheck := ck.Status != checks.Pass && ck.Status != checks.Skip
				if _, block := splitDetail(ck.Detail); block != "" && !(failingCase && failingCheck) {
					ns = append(ns, note{where: where, name: ck.Name, block: block})
				}
			}
			for _, ck := range c.Checks {
				collect("", ck)
			}
			for _, rr := range c.Requests {
				for _, ck := range rr.Checks {
					collect(fmt.Sprintf("%d/%d", rr.Index, rr.Of), ck)
				}
			}
		}
	}
	if len(ns) == 0 {
		return
	}
	b.WriteString("\n<details><summary>Notes, possible improvements and baseline snippets (" + strconv.Itoa(len(ns)) + ")</summary>\n\n")
	for _, n := range ns {
		if n.text != "" {
			fmt.Fprintf(b, "- %s · `%s`: %s\n", n.where, cellEscape(n.name), cellEscape(n.text))
		}
	}
	for _, n := range ns {
		if n.block != "" {
			fmt.Fprintf(b, "\n%s · `%s`\n\n", n.where, cellEscape(n.name))
			codeBlock(b, "text", n.block, lv.maxBlock)
		}
	}
	b.WriteString("\n</details>\n")
}

// cellEscape makes text safe inside a table cell: no line breaks, no pipes, no HTML.
func cellEscape(s string) string {
	s = strings.ReplaceAll(s, "\r", "")
	s = strings.ReplaceAll(s, "\n", " ")
	return htmlEscape(strings.ReplaceAll(s, "|", `\|`))
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// mdEscape keeps a name from being read as emphasis or a link.
func mdEscape(s string) string {
	return strings.NewReplacer("*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`, "<", "&lt;", "`", "'").Replace(s)
}

func quoteLines(s string) string {
	return strings.ReplaceAll(htmlEscape(strings.TrimRight(s, "\n")), "\n", "\n> ")
}
