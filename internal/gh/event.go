package gh

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/diffusion-check/diffusion-check/internal/inputfile"
)

// Event is what publishing needs from a workflow's event payload.
type Event struct {
	// Number is the pull request number; 0 when the event is not about one (no comment).
	Number int
	// HeadSHA is the commit the statuses go on: the pull request's head, not the merge commit.
	HeadSHA string
	// Repo is owner/name of the repository the event belongs to ("" if the payload has none).
	Repo string
	// HeadRepo is owner/name of the repository the tested commit comes from: a fork's for a
	// pull request from a fork ("" if the payload does not say).
	HeadRepo string
	// HeadBranch is the branch of HeadRepo the tested commit was pushed to (a workflow_run's
	// head_branch, a pull request's head.ref; "" if the payload does not say). A fork's
	// branch may share its name with one of this repository's: it names a branch only
	// together with HeadRepo's owner.
	HeadBranch string
	// WorkflowRun is set for a workflow_run event: the commit and pull request are those of
	// the run that triggered it, and a fork's pull request is not listed in the payload.
	WorkflowRun bool
}

// FromFork reports whether the event's commit comes from another repository than the one
// the workflow runs in: code that the repository's maintainers did not write.
func (ev Event) FromFork() bool { return ev.HeadRepo != "" && ev.Repo != "" && ev.HeadRepo != ev.Repo }

// ParseEvent reads a GitHub event payload (GITHUB_EVENT_PATH, or a file uploaded by the
// pull_request workflow for the workflow_run pattern): pull_request and
// pull_request_target events, workflow_run events, and push events (statuses only). For a
// workflow_run event the commit is the run's head_sha, and the pull request the one of
// pull_requests[] with that head (none for a fork's pull request: see Client.Target).
func ParseEvent(data []byte) (Event, error) {
	type repo struct {
		FullName string `json:"full_name"`
	}
	var p struct {
		Number      int `json:"number"`
		PullRequest *struct {
			Number int `json:"number"`
			Head   struct {
				SHA  string `json:"sha"`
				Ref  string `json:"ref"`
				Repo *repo  `json:"repo"`
			} `json:"head"`
		} `json:"pull_request"`
		WorkflowRun *struct {
			HeadSHA        string `json:"head_sha"`
			HeadBranch     string `json:"head_branch"`
			HeadRepository *repo  `json:"head_repository"`
			PullRequests   []struct {
				Number int `json:"number"`
				Head   struct {
					SHA string `json:"sha"`
				} `json:"head"`
			} `json:"pull_requests"`
		} `json:"workflow_run"`
		After      string `json:"after"`
		Repository repo   `json:"repository"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return Event{}, fmt.Errorf("event payload: %w", err)
	}
	ev := Event{Repo: p.Repository.FullName}
	switch {
	case p.PullRequest != nil:
		ev.Number, ev.HeadSHA = cmp.Or(p.PullRequest.Number, p.Number), p.PullRequest.Head.SHA
		ev.HeadBranch = p.PullRequest.Head.Ref
		if r := p.PullRequest.Head.Repo; r != nil {
			ev.HeadRepo = r.FullName
		}
	case p.WorkflowRun != nil:
		ev.WorkflowRun = true
		ev.HeadSHA, ev.HeadBranch = p.WorkflowRun.HeadSHA, p.WorkflowRun.HeadBranch
		if r := p.WorkflowRun.HeadRepository; r != nil {
			ev.HeadRepo = r.FullName
		}
		// The statuses go on the commit the run tested; a pull request listed with another
		// head has moved on since, and is not the one this run is about.
		for _, pr := range p.WorkflowRun.PullRequests {
			if pr.Head.SHA == "" || pr.Head.SHA == ev.HeadSHA {
				ev.Number = pr.Number
				break
			}
		}
	default:
		ev.HeadSHA = p.After
	}
	if ev.HeadSHA == "" {
		return Event{}, errors.New("event payload: no head commit (want a pull_request, workflow_run or push event)")
	}
	if !isSHA(ev.HeadSHA) {
		return Event{}, fmt.Errorf("event payload: head commit %q is not a commit SHA", ev.HeadSHA)
	}
	if ev.Number < 0 {
		return Event{}, fmt.Errorf("event payload: pull request number %d", ev.Number)
	}
	return ev, nil
}

func isSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// maxEventBytes bounds an event payload file: GitHub's are a few MiB at most, and an uploaded
// one (report --event) may be anything a pull request's code wrote.
const maxEventBytes = 64 << 20

// ReadEvent reads and parses an event payload file: a regular file of at most maxEventBytes,
// read while ctx lasts.
func ReadEvent(ctx context.Context, path string) (Event, error) {
	data, err := inputfile.Read(ctx, path, maxEventBytes)
	if err != nil {
		return Event{}, fmt.Errorf("read event: %w", err)
	}
	ev, err := ParseEvent(data)
	if err != nil {
		return Event{}, fmt.Errorf("%s: %w", path, err)
	}
	return ev, nil
}
