package report

import (
	"cmp"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/words"
	"github.com/diffusion-check/diffusion-check/results"
)

// statusContextPrefix starts the commit status context of every lane.
const statusContextPrefix = "diffusion-check/"

// StatusContext is the commit status context of a lane.
func StatusContext(lane string) string { return statusContextPrefix + lane }

// LaneOfContext is the lane whose status context is context, and whether it is one: a
// diffusion-check context whose lane is a name (results.ValidName).
func LaneOfContext(context string) (string, bool) {
	lane, ok := strings.CutPrefix(context, statusContextPrefix)
	return lane, ok && results.ValidName(lane) == nil
}

// statusState is the commit status state a lane's status calls for: success for pass,
// known and flaky, failure for fail, pending for a lane still running, error otherwise.
func statusState(s results.Status) string {
	switch s {
	case results.Pass, results.Known, results.Flaky:
		return "success"
	case results.Fail:
		return "failure"
	case statusPending:
		return "pending"
	}
	return "error"
}

// laneOfState is the lane status a commit status state stands for, when nothing finer is
// known (the previous comment's record of the same run).
func laneOfState(state string) results.Status {
	switch state {
	case "success":
		return results.Pass
	case "failure":
		return results.Fail
	case "pending":
		return statusPending
	}
	return results.Error
}

// maxDescription is GitHub's limit on a commit status description, in characters.
const maxDescription = 140

// Status is a commit status to set on a pull request's head commit.
type Status struct {
	Lane        string
	State       string // pending, success, failure or error
	Description string
	TargetURL   string
}

// LaneStatus is the commit status a lane's result calls for: success for pass, known and
// flaky (with a note naming the flaky check: "1 flaky: perf.e2e not reproduced in 0/2"),
// failure for fail, error otherwise, with a description that names what failed first.
func LaneStatus(l results.Result, targetURL string) Status {
	n := count([]results.Result{l})
	st := Status{Lane: l.Lane, State: statusState(l.Status), TargetURL: targetURL}
	if st.State == "pending" { // a results file cannot say it is still running
		st.State = "error"
	}
	switch l.Status {
	case results.Pass:
		st.Description = fmt.Sprintf("all %s passed", words.Plural(n.requests, "request"))
	case results.Known:
		st.Description = fmt.Sprintf("%d of %s passed, %d known failures", n.passed, words.Plural(n.requests, "request"), n.known)
	case results.Flaky:
		st.Description = fmt.Sprintf("passed; %s", checks.FlakyNote(l))
		if n.known > 0 {
			st.Description += fmt.Sprintf("; %d known failures", n.known)
		}
	case results.Fail:
		st.Description = fmt.Sprintf("%d of %s failed", n.failed, words.Plural(n.requests, "request"))
		if keys := failingKeys([]results.Result{l}); len(keys) > 0 {
			st.Description += ": " + strings.ReplaceAll(strings.Join(keys, ", "), l.Lane+"/", "")
		}
	default:
		st.Description = fmt.Sprintf("could not check everything (%s)", cmp.Or(string(l.Status), "no status"))
		if len(l.Errors) > 0 {
			st.Description += ": " + words.FirstLine(l.Errors[0])
		}
	}
	if ran, of, sel, _ := selected([]results.Result{l}); sel != nil && sel.All == "" && st.State == "success" {
		if ran == 0 {
			st.Description = fmt.Sprintf("nothing to check: none of the %s is selected by the changed paths", words.Plural(of, "case"))
		} else {
			st.Description += fmt.Sprintf(" (%d of %s selected by the changed paths)", ran, words.Plural(of, "case"))
		}
	}
	st.Description = clip(st.Description, maxDescription)
	return st
}

// PendingStatus is the status of a lane whose run has started.
func PendingStatus(lane, targetURL string) Status {
	return Status{Lane: lane, State: "pending", Description: "running", TargetURL: targetURL}
}

// clip shortens s to at most n characters, ending with "…" when it had to cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
