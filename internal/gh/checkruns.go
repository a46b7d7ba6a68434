package gh

import (
	"context"
	"fmt"
	"time"

	"github.com/google/go-github/v66/github"
)

// MaxAnnotationsPerRequest is how many annotations one create or update of a check run may
// carry; more go in further updates, which GitHub adds to the run's.
const MaxAnnotationsPerRequest = 50

// CheckRun is a completed check run: its name ("diffusion-check / base"), the commit it is
// about, its conclusion (success, failure, neutral, skipped, …), the page it links to, and
// its output: a title, a Markdown summary (GitHub takes at most 65,535 characters; report.maxCheckSummary keeps to it), and the
// annotations on files of the repository.
type CheckRun struct {
	Name, HeadSHA, Conclusion, DetailsURL string
	Title, Summary                        string
	Annotations                           []Annotation
}

// Annotation marks lines of a file of the repository in a check run: Path is relative to
// the repository's root, Level one of notice, warning or failure.
type Annotation struct {
	Path               string
	StartLine, EndLine int
	Level              string
	Title, Message     string
}

// checksPerm is the permission a check run write needs.
const checksPerm = "checks: write"

// CreateCheckRun creates run, completed, and returns its page. Its annotations go 50 a
// request: the first 50 with the create, each further 50 in an update of the run's output.
// A 403 is ErrForbidden (the job lacks checks: write) or, for a fork's pull request,
// ErrReadOnly.
//
// GitHub API docs: https://docs.github.com/rest/checks/runs#create-a-check-run
// GitHub API docs: https://docs.github.com/rest/checks/runs#update-a-check-run
//
//meta:operation POST /repos/{owner}/{repo}/check-runs
//meta:operation PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}
func (g *Client) CreateCheckRun(ctx context.Context, run CheckRun) (string, error) {
	batches := annotationBatches(run.Annotations)
	output := func(batch []*github.CheckRunAnnotation) *github.CheckRunOutput {
		return &github.CheckRunOutput{Title: &run.Title, Summary: &run.Summary, Annotations: batch}
	}
	opts := github.CreateCheckRunOptions{
		Name: run.Name, HeadSHA: run.HeadSHA, Status: github.String("completed"), Conclusion: &run.Conclusion,
		CompletedAt: &github.Timestamp{Time: time.Now().UTC().Truncate(time.Second)}, Output: output(batches[0]),
	}
	if run.DetailsURL != "" {
		opts.DetailsURL = &run.DetailsURL
	}
	what := fmt.Sprintf("create check run %q on %s/%s@%s", run.Name, g.Owner, g.Repo, shortSHA(run.HeadSHA))
	cr, _, err := g.API.Checks.CreateCheckRun(ctx, g.Owner, g.Repo, opts)
	if err != nil {
		return "", g.writeErr(what, checksPerm, err)
	}
	for i, batch := range batches[1:] {
		upd := github.UpdateCheckRunOptions{Name: run.Name, Output: output(batch)}
		if _, _, err := g.API.Checks.UpdateCheckRun(ctx, g.Owner, g.Repo, cr.GetID(), upd); err != nil {
			return cr.GetHTMLURL(), g.writeErr(
				fmt.Sprintf("%s: annotations %d to %d", what, (i+1)*MaxAnnotationsPerRequest+1, (i+1)*MaxAnnotationsPerRequest+len(batch)),
				checksPerm, err)
		}
	}
	return cr.GetHTMLURL(), nil
}

// annotationBatches cuts as into requests of at most MaxAnnotationsPerRequest; always one
// batch, which may be empty.
func annotationBatches(as []Annotation) [][]*github.CheckRunAnnotation {
	out := [][]*github.CheckRunAnnotation{nil}
	for i, a := range as {
		if i > 0 && i%MaxAnnotationsPerRequest == 0 {
			out = append(out, nil)
		}
		ga := &github.CheckRunAnnotation{
			Path: github.String(a.Path), StartLine: github.Int(a.StartLine), EndLine: github.Int(a.EndLine),
			AnnotationLevel: github.String(a.Level), Message: github.String(a.Message),
		}
		if a.Title != "" {
			ga.Title = github.String(a.Title)
		}
		out[len(out)-1] = append(out[len(out)-1], ga)
	}
	return out
}
