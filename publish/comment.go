package publish

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/diffusion-check/diffusion-check/report"
	"github.com/diffusion-check/diffusion-check/results"
)

// Mode is report's --comment (the action's comment_mode): when Publish posts or edits the
// PR comment. Commit statuses are set whatever it says.
type Mode string

// The comment modes.
const (
	CommentAlways   Mode = "always"
	CommentFailures Mode = "failures"
	CommentChanges  Mode = "changes"
	// CommentRecreate posts the report as a new comment and deletes the one before it, so
	// that it sits at the end of the conversation (marocchino/sticky-pull-request-comment's
	// recreate); whenever always would write.
	CommentRecreate Mode = "recreate"
	CommentOff      Mode = "off"
)

func (m Mode) String() string { return string(m) }

// Set accepts always, failures, changes, recreate or off.
func (m *Mode) Set(s string) error {
	switch Mode(s) {
	case CommentAlways, CommentFailures, CommentChanges, CommentRecreate, CommentOff:
		*m = Mode(s)
		return nil
	}
	return fmt.Errorf("want always, failures, changes, recreate or off, got %q", s)
}

// wants decides whether the report's comment is posted (or edited), and says why not.
// exists tells whether the PR already has this key's comment; its recorded state is
// rep.Previous (nil when it has none, or records none).
//   - failures: when a lane did not pass, and always when the comment exists, so that a
//     comment that showed failures is edited to show the fix;
//   - changes: when the verdicts (lane statuses, the requests that did not pass) differ
//     from those the comment records, or there is no comment yet.
func (m Mode) wants(rep *report.Report, exists bool) (bool, string) {
	switch m {
	case CommentOff:
		return false, "comments are off"
	case CommentFailures:
		if exists {
			return true, ""
		}
		for _, l := range rep.Lanes {
			if l.Status != results.Pass && l.Status != results.Known && l.Status != results.Flaky {
				return true, ""
			}
		}
		return false, "every lane passed and the PR has no comment to update"
	case CommentChanges:
		if !exists || rep.Previous == nil || !sameVerdicts(rep.State(), *rep.Previous) {
			return true, ""
		}
		return false, "the verdicts are those the comment already shows"
	}
	return true, ""
}

// sameVerdicts compares two comment states by what a reader sees change: each lane's status
// and the requests that did not pass (not the run links, which change every run).
func sameVerdicts(a, b report.State) bool {
	sameLane := func(x, y report.LaneState) bool { return x.Name == y.Name && x.Status == y.Status }
	return slices.EqualFunc(a.Lanes, b.Lanes, sameLane) && slices.Equal(a.Failing, b.Failing) && a.Truncated == b.Truncated
}

// comment reads the previous comment of rep's key when the mode needs it, decides whether
// to write, and upserts the comment; it returns the comment's URL ("" when none was
// written). An error is GitHub's, and then no comment is written blind.
func (p *publisher) comment(ctx context.Context, rep *report.Report) (string, error) {
	if p.opts.Event.Number <= 0 {
		fmt.Fprintln(p.opts.Log, "PR comment: not posted (the event names no pull request)")
		return "", nil
	}
	found := false
	if p.opts.Comment != CommentOff { // off: no comment to read, and no account to find
		var err error
		if found, err = p.previous(ctx, rep); err != nil {
			return "", err
		}
	}
	rep.Others = p.others(ctx, rep)
	if ok, why := p.opts.Comment.wants(rep, found); !ok {
		fmt.Fprintf(p.opts.Log, "PR comment: not posted (--comment %s: %s)\n", p.opts.Comment, why)
		return "", nil
	}
	return p.converge(ctx, rep)
}

// headMoved reads the pull request's head before a comment write: a report of an earlier push
// (the always() report of a run a newer push cancelled, a slow lane) must not replace the
// comment of the push the pull request shows now. When the head moved on, the comment is not
// written, and the log and the job summary say why; the statuses of the report's own commit
// were set before. A head that cannot be read does not stop the comment: the write that
// follows fails the same way if GitHub is down, and otherwise writes what was measured.
func (p *publisher) headMoved(ctx context.Context) bool {
	ev := p.opts.Event
	head, err := p.c.PullHead(ctx, ev.Number)
	if err != nil {
		fmt.Fprintf(p.opts.Log, "PR comment: could not read #%d's head (%v); writing the comment of %s\n", ev.Number, err, ev.HeadSHA)
		return false
	}
	if head == "" || head == ev.HeadSHA {
		return false
	}
	why := fmt.Sprintf("PR comment: not written: #%d's head moved on to %s, and these are the results of an earlier push, %s "+
		"(its commit statuses are set); the comment is the newer push's to write", ev.Number, head, ev.HeadSHA)
	fmt.Fprintln(p.opts.Log, why)
	p.movedOn = head
	if p.opts.Run != nil {
		if err := p.opts.Run.AddSummary(why + "\n"); err != nil {
			fmt.Fprintf(p.opts.Log, "job summary: %v\n", err)
		}
	}
	return true
}

// maxCommentRounds bounds converge's writes: a round is only needed again when another
// report's lane changed its status between this one's read and its write.
const maxCommentRounds = 5

// converge writes the comment, then reads the head commit's statuses again: when another
// lane's status changed since the comment was rendered (a report of another lane published
// meanwhile), it renders and writes it again, until a read after a write finds what the
// comment shows. Why this converges, whatever the interleaving of concurrent reports: every
// report sets its own lanes' statuses before it writes any comment, and each lane's status
// is its own write (the statuses are the state, and no write of one lane can lose
// another's). Let W be the last comment write of all, by report X, and V X's read after it,
// which found the statuses W was rendered from. Any report Y set its statuses before its own
// first comment write, so before W, so before V: W shows Y's lanes as their statuses say.
// The comment's own hidden state is only read for what it adds (what changed since, a known
// or flaky pass of the same run), never as the record of another lane's verdict.
func (p *publisher) converge(ctx context.Context, rep *report.Report) (string, error) {
	for round := 1; ; round++ {
		if p.headMoved(ctx) {
			return "", nil
		}
		write := p.c.UpsertComment
		if round == 1 && p.opts.Comment == CommentRecreate {
			write = p.c.RecreateComment // later rounds edit the new comment
		}
		c, err := write(ctx, p.opts.Event.Number, report.Marker(rep.Key), report.Comment(rep))
		if err != nil {
			return "", err
		}
		again := p.others(ctx, rep)
		if again == nil || slices.Equal(again, rep.Others) {
			return c.URL, nil
		}
		if round == maxCommentRounds {
			fmt.Fprintf(p.opts.Log, "PR comment: other lanes' statuses still changing after %d writes; the comment shows them as of the last read\n", round)
			return c.URL, nil
		}
		fmt.Fprintln(p.opts.Log, "PR comment: another lane's status changed while it was written: writing it again")
		rep.Others = again
	}
}

// others reads the statuses of the head commit, as report.Report.Others takes them: the
// diffusion-check lanes rep does not hold, sorted by lane. nil when they cannot be read (on
// the log: the comment then shows the other lanes as the previous comment recorded them).
func (p *publisher) others(ctx context.Context, rep *report.Report) []report.Status {
	// A read of the statuses that never answers must not spend the budget the comment needs:
	// it gets a share of it, and the comment is written without the other lanes' news.
	ctx, cancel := context.WithTimeout(ctx, max(p.opts.Budget/4, time.Second))
	defer cancel()
	all, err := p.c.LatestStatuses(ctx, p.opts.Event.HeadSHA)
	if err != nil {
		fmt.Fprintf(p.opts.Log, "PR comment: %v; other lanes are shown as the previous comment recorded them\n", err)
		return nil
	}
	out := []report.Status{}
	for _, st := range all {
		lane, ok := report.LaneOfContext(st.Context)
		if !ok || slices.ContainsFunc(rep.Lanes, func(l results.Result) bool { return l.Lane == lane }) {
			continue
		}
		out = append(out, report.Status{Lane: lane, State: st.State, Description: st.Description, TargetURL: st.TargetURL})
	}
	slices.SortFunc(out, func(a, b report.Status) int { return cmp.Compare(a.Lane, b.Lane) })
	return out
}

// previous finds the token's account (gh.Client.Identity), then reads the state recorded in
// the PR's comment of this key into rep.Previous and reports whether the comment exists.
// When the account cannot be told, no comment is ours: the report is posted as a new one.
func (p *publisher) previous(ctx context.Context, rep *report.Report) (bool, error) {
	if p.c.Self == nil {
		id, how, err := p.c.Identity(ctx)
		if err != nil {
			msg := fmt.Sprintf("publish: %v; posting a new comment, editing and deleting none", err)
			if p.opts.Run != nil {
				p.opts.Run.Warning(msg)
			} else {
				fmt.Fprintln(p.opts.Log, msg)
			}
			return false, nil
		}
		fmt.Fprintf(p.opts.Log, "publish: %s\n", how)
		p.c.Self = &id
	}
	prev, err := p.c.FindComment(ctx, p.opts.Event.Number, report.Marker(rep.Key))
	if err != nil || prev == nil {
		return false, err
	}
	rep.Previous = report.ParseState(prev.Body)
	return true, nil
}
