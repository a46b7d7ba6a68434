package gh

import (
	"errors"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/internal/githubfake"
	"github.com/google/go-cmp/cmp"
)

// TestTargetFromTrustedDataOnly decides where to publish for trusted events and uploaded
// copies, with a fake that answers as GitHub does (a fork-only commit lists no pull request
// when asked of the base): a workflow_run whose payload lists no pull request finds it by
// the payload's head repository and commit (open, into this repository, from that
// repository, exactly that head, only one); an upload that names another PR, commit or
// repository is refused with ErrForgedTarget.
func TestTargetFromTrustedDataOnly(t *testing.T) {
	const other = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	forkRun := Event{HeadSHA: head, Repo: "octo/diffusion", HeadRepo: "mallory/diffusion", HeadBranch: "main", WorkflowRun: true}
	sameRun := Event{HeadSHA: head, Repo: "octo/diffusion", HeadRepo: "octo/diffusion", HeadBranch: "fix", WorkflowRun: true}
	tests := []struct {
		name     string
		pulls    []githubfake.Pull
		hidden   string // a head repository the token cannot see
		fault    *githubfake.Fault
		trusted  Event
		uploaded *Event
		want     int    // PR number
		note     string // in Notes
		err      string
	}{
		{name: "same-repository PR", pulls: []githubfake.Pull{{Number: 4, HeadSHA: head, HeadRef: "fix"}},
			trusted: sameRun, want: 4, note: "pull request #4 found by its head commit 0123456789ab from octo/diffusion"},
		{name: "fork PR, asked of the fork", pulls: []githubfake.Pull{{Number: 7, HeadSHA: head, HeadRepo: "mallory/diffusion", HeadRef: "main"}},
			trusted: forkRun, want: 7, note: "asked: mallory/diffusion's pull requests of the commit"},
		{name: "fork branch named like a base branch", pulls: []githubfake.Pull{
			{Number: 5, HeadSHA: other, HeadRef: "main", BaseRef: "release"},
			{Number: 7, HeadSHA: head, HeadRepo: "mallory/diffusion", HeadRef: "main"}},
			hidden: "mallory/diffusion", trusted: forkRun, want: 7, note: "asked: octo/diffusion's open pull requests from mallory:main"},
		{name: "a branch name git refuses is never asked", pulls: []githubfake.Pull{{Number: 7, HeadSHA: head, HeadRepo: "mallory/diffusion", HeadRef: "main"}},
			hidden: "mallory/diffusion", trusted: Event{HeadSHA: head, Repo: "octo/diffusion", HeadRepo: "mallory/diffusion", HeadBranch: "octo:main",
				WorkflowRun: true},
			want: 0, note: "mallory/diffusion cannot be asked for the pull requests of 0123456789ab (404: deleted, or not visible to this token) and the event names " +
				"no usable head branch: statuses only, no comment"},
		{name: "GitHub failing is an error", pulls: []githubfake.Pull{{Number: 7, HeadSHA: head, HeadRepo: "mallory/diffusion", HeadRef: "main"}},
			fault: &githubfake.Fault{Path: "/repos/mallory/diffusion/commits/", Code: 502, Times: 1000}, trusted: forkRun,
			err: "find the pull request of 0123456789ab from mallory/diffusion"},
		{name: "the base's own main is not the fork's", pulls: []githubfake.Pull{{Number: 5, HeadSHA: head, HeadRef: "main", BaseRef: "release"}},
			trusted: forkRun, want: 0, note: "no open pull request of octo/diffusion has head 0123456789ab from mallory/diffusion"},
		{name: "two open PRs from one fork branch", pulls: []githubfake.Pull{
			{Number: 7, HeadSHA: head, HeadRepo: "mallory/diffusion", HeadRef: "main"},
			{Number: 8, HeadSHA: head, HeadRepo: "mallory/diffusion", HeadRef: "main", BaseRef: "release"}},
			trusted: forkRun, want: 0, note: "2 open pull requests have head 0123456789ab from mallory/diffusion (#7, #8): statuses only, no comment"},
		{name: "force-push: the head moved on", pulls: []githubfake.Pull{
			{Number: 7, HeadSHA: other, Previous: []string{head}, HeadRepo: "mallory/diffusion", HeadRef: "main"}},
			trusted: forkRun, want: 0, note: "#7's head moved on to bbbbbbbbbbbb: results of an earlier push"},
		{name: "closed PR and another fork's are not it", pulls: []githubfake.Pull{
			{Number: 5, HeadSHA: head, HeadRepo: "mallory/diffusion", State: "closed"},
			{Number: 6, HeadSHA: head, HeadRepo: "eve/diffusion", HeadRef: "main"}},
			trusted: forkRun, want: 0, note: "no open pull request of octo/diffusion has head"},
		{name: "head repository not OWNER/NAME", trusted: Event{HeadSHA: head, HeadRepo: "mallory/..", WorkflowRun: true},
			err: `names head repository "mallory/..", not OWNER/NAME`},
		{name: "forged commit and PR", pulls: []githubfake.Pull{{Number: 7, HeadSHA: head, HeadRepo: "mallory/diffusion", HeadRef: "main"}},
			trusted: forkRun, uploaded: &Event{Number: 8, HeadSHA: other}, err: "it names commit " + other + ", not " + head + ", pull request #8, not #7"},
		{name: "forged repository", trusted: Event{Number: 7, HeadSHA: head, Repo: "octo/diffusion"},
			uploaded: &Event{Number: 7, HeadSHA: head, Repo: "octo/other"}, err: "repository octo/other, not octo/diffusion"},
		{name: "an agreeing upload", trusted: Event{Number: 7, HeadSHA: head, Repo: "octo/diffusion"},
			uploaded: &Event{Number: 7, HeadSHA: head, Repo: "octo/diffusion"}, want: 7},
		{name: "trusted event of another repository", trusted: Event{Number: 7, HeadSHA: head, Repo: "octo/other"},
			err: "the workflow's event is for repository octo/other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, p, _ := setup(t, githubfake.Config{})
			for _, pr := range tt.pulls {
				f.AddPull(pr)
			}
			if tt.hidden != "" {
				f.HideRepo(tt.hidden)
			}
			if tt.fault != nil {
				f.Inject(*tt.fault)
			}
			got, err := p.Target(t.Context(), tt.trusted, tt.uploaded)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				if tt.uploaded != nil && !errors.Is(err, ErrForgedTarget) {
					t.Errorf("err %v is not ErrForgedTarget", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got.Number); diff != "" {
				t.Errorf("PR (-want +got):\n%s", diff)
			}
			if got.HeadSHA != tt.trusted.HeadSHA {
				t.Errorf("commit %s, want the trusted %s", got.HeadSHA, tt.trusted.HeadSHA)
			}
			if tt.note != "" && !strings.Contains(strings.Join(got.Notes, "\n"), tt.note) {
				t.Errorf("notes %q, want %q", got.Notes, tt.note)
			}
		})
	}
}
