package gh

import (
	"errors"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/internal/githubfake"
	"github.com/google/go-cmp/cmp"
)

// TestTargetFromTrustedDataOnly decides where to publish for trusted events and uploaded
// copies: a fork's workflow_run finds its PR by head commit (open, from that fork, only one),
// and an upload that names another PR, commit or repository is refused with ErrForgedTarget.
func TestTargetFromTrustedDataOnly(t *testing.T) {
	const other = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	forkRun := Event{HeadSHA: head, Repo: "octo/diffusion", HeadRepo: "mallory/diffusion", WorkflowRun: true}
	tests := []struct {
		name     string
		pulls    []githubfake.Pull
		trusted  Event
		uploaded *Event
		want     int    // PR number
		note     string // in Notes
		err      string
	}{
		{name: "fork run, one open PR", pulls: []githubfake.Pull{{Number: 7, HeadSHA: head, HeadRepo: "mallory/diffusion"}},
			trusted: forkRun, want: 7, note: "pull request #7 found by its head commit"},
		{name: "closed PR and another fork's are not it", pulls: []githubfake.Pull{
			{Number: 5, HeadSHA: head, HeadRepo: "mallory/diffusion", State: "closed"},
			{Number: 6, HeadSHA: head, HeadRepo: "eve/diffusion"}},
			trusted: forkRun, want: 0, note: "no open pull request of octo/diffusion has head"},
		{name: "two open PRs: statuses only", pulls: []githubfake.Pull{
			{Number: 7, HeadSHA: head, HeadRepo: "mallory/diffusion"}, {Number: 8, HeadSHA: head, HeadRepo: "mallory/diffusion"}},
			trusted: forkRun, want: 0, note: "2 open pull requests have head"},
		{name: "forged commit and PR", pulls: []githubfake.Pull{{Number: 7, HeadSHA: head, HeadRepo: "mallory/diffusion"}},
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
