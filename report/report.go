package report

import (
	"cmp"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/diffusion-check/diffusion-check/internal/words"
	"github.com/diffusion-check/diffusion-check/results"
)

// commentLimit is GitHub's limit on the body of an issue comment, in characters. A comment
// is kept below it in bytes, which are never fewer than characters.
const commentLimit = 65536

// Report is what the PR comment, the job summary and the JUnit file are rendered from: the
// merged results of one or more lanes (results.Merge) and where they can be seen.
type Report struct {
	// Key tells apart the comments of several reports on one PR (a marker in the comment).
	Key string
	// Lanes holds the merged results, one per lane, statuses finalized.
	Lanes []results.Result
	// Pending names lanes that are expected but have no results yet (shown as ⏳).
	Pending []string
	// RunURL and RunLabel (e.g. "run #123") link to the workflow run that made the results.
	RunURL, RunLabel string
	// FullURL links to the unabridged report (job summary or artifact) from a trimmed comment.
	FullURL string
	// ArtifactsURL links to the run's artifacts: outputs, server logs and the side-by-side
	// ground truth / output / difference pictures of consistency failures.
	ArtifactsURL string
	// Previous is the state the previous comment of this PR and key recorded, if any: it
	// tells what changed since and, when Others is nil, keeps the other lanes' verdicts in
	// the header.
	Previous *State
	// Others are the commit statuses on the head commit of the lanes this report does not
	// hold, as GitHub has them (publish reads them after setting this report's own): the
	// header shows them and the headline speaks for them, so that the comment and the
	// statuses never disagree on a lane. nil: they were not read, and the previous comment's
	// other lanes are shown instead; empty: there are none.
	Others []Status
	// Trend, when set, is the history of a failing check on the base branch (its last runs,
	// a sparkline, a link to the chart), appended to the check's line under Problems; ""
	// where there is no history.
	Trend func(lane *results.Result, caseID string, c results.Check) string
	// Pictures are the URLs of the failure pictures (worst frame: ground truth | output |
	// SSIM map) that readers of the comment can open, by request; shown inline under the
	// problems (pictures.go). cmd fills it after uploading them; nil: none to show.
	Pictures map[PictureKey]string
}

// Comment renders the PR comment: the marker, the hidden state (within its own budget,
// maxStateBytes), and the report trimmed in steps until the whole body stays under
// commentLimit, each case showing its first commentCaseRequests failing requests in full.
func Comment(r *Report) string {
	head := Marker(r.Key) + "\n" + r.State().encode() + "\n"
	return head + markdown(r, commentLimit-len(head)-1, fullInSummary(r.FullURL), commentCaseRequests)
}

// commentCaseRequests and checkRunCaseRequests are how many failing requests of one case the
// comment and a check run show in full (the rest are counted, with where they are): one case
// whose every request failed must not push every other case's details out (a case of 55
// failing requests took 83,910 characters of details alone).
const (
	commentCaseRequests  = 3
	checkRunCaseRequests = 10
)

func fullInSummary(url string) string {
	if url == "" {
		return "The full report is in the job summary of the run."
	}
	return "The full report is in the [job summary](" + url + ")."
}

// renderMarkdown renders the report in GitHub-flavoured Markdown. With limit > 0 it returns the
// most complete rendering shorter than limit bytes, degrading in steps — collapse detail,
// drop passing rows, truncate logs, drop detail — and saying so at the top, so that Markdown
// is never cut in the middle of a table or a tag. limit ≤ 0 renders everything.
func renderMarkdown(r *Report, limit int) string {
	return markdown(r, limit, fullInSummary(r.FullURL), 0)
}

// markdown is renderMarkdown with where, in a trimmed report, the full one is, and
// caseRequests the failing requests of a case shown in full (0: all). When even the last
// level does not fit (ids, errors or lanes enough to fill any limit), only the verdict is
// left (verdictOnly), which fits whatever the names.
//
// Each level is no longer than the one before (TestDegrade), so the first that fits is found
// by bisection: a report of 10,000 requests renders 4 levels, not 10.
func markdown(r *Report, limit int, where string, caseRequests int) string {
	at := func(i int) (string, bool) {
		lv := levels[i]
		lv.caseRequests, lv.elsewhere = caseRequests, where
		out := render(r, lv, where)
		return out, limit <= 0 || len(out) < limit
	}
	if out, ok := at(0); ok {
		return out
	}
	// levels[lo] does not fit; the first that fits, if any, is in (lo, hi].
	lo, hi, best := 0, len(levels), ""
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if out, ok := at(mid); ok {
			hi, best = mid, out
		} else {
			lo = mid
		}
	}
	if hi < len(levels) {
		return best
	}
	return verdictOnly(r, limit, where)
}

// verdictOnly is the report as its headline and a note where the rest is, shorter than limit
// bytes: the headline names the lanes when they fit, else says only the verdict.
func verdictOnly(r *Report, limit int, where string) string {
	worst := worstStatus(r.Lanes)
	head := headline(worst, count(r.Lanes))
	if shown := r.headerLanes(); len(shown) > 1 {
		worst, head = lanesHeadline(shown)
	}
	note := "\n> [!NOTE]\n> Too much to show within GitHub's size limit: only the verdict. " + where + "\n"
	word := map[results.Status]string{results.Fail: "failed", results.Error: "could not check everything", statusPending: "running",
		results.Cancelled: "cancelled", results.Pass: "passed", results.Known: "passed", results.Flaky: "passed", results.Skip: "skipped"}[worst]
	for _, h := range []string{head, cmp.Or(word, string(worst))} {
		if out := fmt.Sprintf("## %s diffusion-check: %s\n", icon(worst), h) + note; len(out) < limit {
			return out
		}
	}
	return clipBytes(fmt.Sprintf("## %s diffusion-check: %s\n", icon(worst), cmp.Or(word, string(worst))), limit-1)
}

// clipBytes is s cut to at most n bytes, at a character boundary.
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:max(n, 0)]
}

// level says how much of the report to render.
type level struct {
	trimmed      string // what was left out, for the note at the top; "" for the full report
	crossAll     bool   // cross-request view for passing cases too
	passingRows  bool   // passing requests in the per-request table
	maxBlock     int    // lines kept of a multi-line detail or a log tail (0: all)
	notes        bool   // possible improvements and snippets of passing cases
	detailBlocks bool   // multi-line details and log tails at all
	cross        bool   // the cross-request view at all
	maxRows      int    // rows of the per-request table and lines of the problems (0: all)
	maxDetails   int    // failing cases with a details block (0: all)
	knownTable   bool   // the known-failure table
	tables       bool   // per-request tables and failure blocks at all
	// caseRequests is how many failing requests of a case its failure block shows in full
	// (0: all); elsewhere says where the others are. Set by markdown, not by a level.
	caseRequests int
	elsewhere    string
}

var levels = []level{
	{crossAll: true, passingRows: true, notes: true, detailBlocks: true, cross: true, knownTable: true, tables: true},
	{trimmed: "detail collapsed", passingRows: true, maxBlock: 40, notes: true, detailBlocks: true, cross: true, knownTable: true, tables: true},
	{trimmed: "detail collapsed, passing requests left out", maxBlock: 40, notes: true, detailBlocks: true, cross: true, knownTable: true, tables: true},
	{trimmed: "detail collapsed, passing requests left out, logs truncated", maxBlock: 10, detailBlocks: true, cross: true, knownTable: true, tables: true},
	{trimmed: "passing requests left out, logs truncated, cross-request view left out", maxBlock: 10, detailBlocks: true, knownTable: true, tables: true},
	{trimmed: "passing requests, logs and long details left out", knownTable: true, tables: true},
	{trimmed: "only the first failing requests shown", maxRows: 100, maxDetails: 20, knownTable: true, tables: true},
	{trimmed: "only the first failing requests shown", maxRows: 25, maxDetails: 5, tables: true},
	{trimmed: "only the verdict shown", maxRows: 10},
}

// render writes the whole report at one level of detail: the header, the problems (what a
// reviewer must see), a compact table per lane, the known failures, and the details
// collapsed below.
func render(r *Report, lv level, where string) string {
	var b strings.Builder
	header(&b, r)
	selectionLine(&b, r, lv)
	if lv.trimmed != "" {
		fmt.Fprintf(&b, "\n> [!NOTE]\n> Trimmed to fit GitHub's size limit (%s). %s\n", lv.trimmed, where)
	}
	problemList(&b, r, lv)
	pictureList(&b, r, lv)
	if lv.tables {
		acrossRequests(&b, r)
	}
	multi := len(r.Lanes) > 1
	for _, l := range r.Lanes {
		if multi || len(r.Lanes[0].Cases) > 0 {
			fmt.Fprintf(&b, "\n### %s %s\n", icon(l.Status), laneTitle(l))
		}
		for _, e := range l.Errors {
			fmt.Fprintf(&b, "\n> [!WARNING]\n> %s\n", quoteLines(e))
		}
		if len(l.Cases) == 0 && len(l.Deselected) > 0 {
			b.WriteString("\nNo case of this lane is selected by the changed paths: nothing to check.\n")
		}
		if lv.tables {
			requestTable(&b, &l, lv)
			idleLine(&b, &l)
		}
	}
	if lv.knownTable {
		knownFailures(&b, r.Lanes)
	}
	// The details, collapsed, under a heading when there are any.
	var d strings.Builder
	if lv.cross {
		for _, l := range r.Lanes {
			crossRequest(&d, &l, multi, lv)
		}
	}
	if lv.tables {
		details(&d, r.Lanes, lv)
		machines(&d, r.Lanes)
	}
	if lv.notes {
		notes(&d, r.Lanes, lv)
	}
	if d.Len() > 0 {
		b.WriteString("\n### Details\n" + d.String())
	}
	return b.String()
}

func laneTitle(l results.Result) string {
	s := "Lane " + escape(l.Lane)
	var extra []string
	if l.GPU != "" {
		extra = append(extra, escape(l.GPU))
	}
	if l.Partition.Total > 1 {
		extra = append(extra, words.Plural(l.Partition.Total, "partition"))
	}
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	return s
}

// bad is a status that makes a lane red (or unknown): everything but pass, known, flaky
// and skip.
func bad(s results.Status) bool {
	return s != results.Pass && s != results.Known && s != results.Flaky && s != results.Skip
}

// failed is a check (or request) status that needs a reader's eye: everything but pass and
// skip (known failures included).
func failed(s results.Status) bool { return s != results.Pass && s != results.Skip }
