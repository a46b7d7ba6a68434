package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/report"
)

// commentMode is report's --comment (the action's comment_mode): when --publish posts or
// edits the PR comment. Commit statuses are set whatever it says.
type commentMode string

const (
	commentAlways   commentMode = "always"
	commentFailures commentMode = "failures"
	commentChanges  commentMode = "changes"
	commentOff      commentMode = "off"
)

func (m commentMode) String() string { return string(m) }

// Set accepts always, failures, changes or off.
func (m *commentMode) Set(s string) error {
	switch commentMode(s) {
	case commentAlways, commentFailures, commentChanges, commentOff:
		*m = commentMode(s)
		return nil
	}
	return fmt.Errorf("want always, failures, changes or off, got %q", s)
}

// wants decides whether the report's comment is posted (or edited), and says why not.
// exists tells whether the PR already has this key's comment; its recorded state is
// rep.Previous (nil when it has none, or records none).
//   - failures: when a lane did not pass, and always when the comment exists, so that a
//     comment that showed failures is edited to show the fix;
//   - changes: when the verdicts (lane statuses, the requests that did not pass) differ
//     from those the comment records, or there is no comment yet.
func (m commentMode) wants(rep *report.Report, exists bool) (bool, string) {
	switch m {
	case commentOff:
		return false, "comments are off"
	case commentFailures:
		if exists {
			return true, ""
		}
		for _, l := range rep.Lanes {
			if l.Status != checks.Pass && l.Status != checks.Known && l.Status != checks.Flaky {
				return true, ""
			}
		}
		return false, "every lane passed and the PR has no comment to update"
	case commentChanges:
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

// previous finds the token's account (gh.Client.Identity), then reads the state recorded in
// the PR's comment of this key into rep.Previous and reports whether the comment exists.
// When the account cannot be told, no comment is ours: the report is posted as a new one.
func (p *publishing) previous(ctx context.Context, e env, rep *report.Report) (bool, error) {
	if p.p.Self == nil {
		id, how, err := p.p.Identity(ctx)
		if err != nil {
			fmt.Fprintf(e.stderr, "publish: %v; posting a new comment, editing and deleting none\n", err)
			return false, nil
		}
		fmt.Fprintf(e.stderr, "publish: %s\n", how)
		p.p.Self = &id
	}
	prev, err := p.p.FindComment(ctx, p.ev.Number, report.Marker(rep.Key))
	if err != nil || prev == nil {
		return false, err
	}
	rep.Previous = report.ParseState(prev.Body)
	return true, nil
}
