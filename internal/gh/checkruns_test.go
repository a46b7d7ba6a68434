package gh

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/diffusion-check/diffusion-check/internal/githubfake"
)

// TestCheckRunSendsAnnotationsFiftyARequest: 120 annotations go in one create and two
// updates (the fake refuses more than 50 a request), and the run holds all of them, completed
// with its conclusion, title and summary.
func TestCheckRunSendsAnnotationsFiftyARequest(t *testing.T) {
	f, p, _ := setup(t, githubfake.Config{})
	run := CheckRun{Name: "diffusion-check / base", HeadSHA: head, Conclusion: "failure", DetailsURL: "https://github.com/octo/diffusion/actions/runs/1",
		Title: "4 of 6 requests failed", Summary: "## ❌ diffusion-check"}
	for i := range 120 {
		run.Annotations = append(
			run.Annotations,
			Annotation{
				Path:      "suites/ci.yaml",
				StartLine: i + 1,
				EndLine:   i + 1,
				Level:     "failure",
				Title:     fmt.Sprintf("case c%d", i),
				Message:   "min SSIM 0.72 ≤ 0.92",
			},
		)
	}
	url, err := p.CreateCheckRun(t.Context(), run)
	if err != nil {
		t.Fatal(err)
	}
	got := f.CheckRuns()
	if len(got) != 1 {
		t.Fatalf("%d check runs, want 1", len(got))
	}
	c := got[0]
	if c.Requests != 3 || len(c.Annotations) != 120 || c.Status != "completed" || c.Conclusion != "failure" ||
		c.Title != run.Title || c.Summary != run.Summary || c.Name != run.Name || c.HeadSHA != head || !strings.HasSuffix(url, fmt.Sprint(c.ID)) {
		t.Errorf("check run %+v (%d annotations in %d requests), url %q", c.Name, len(c.Annotations), c.Requests, url)
	}
	for i, a := range c.Annotations {
		if a.StartLine != i+1 || a.Level != "failure" || a.Path != "suites/ci.yaml" {
			t.Errorf("annotation %d: %+v", i, a)
			break
		}
	}
}

// TestCheckRunRefusedSaysWhichPermission: a token without checks: write gets ErrForbidden
// naming the permission; a fork's read-only token gets ErrReadOnly; neither is retried.
func TestCheckRunRefusedSaysWhichPermission(t *testing.T) {
	run := CheckRun{Name: "diffusion-check / base", HeadSHA: head, Conclusion: "success", Title: "all 2 requests passed", Summary: "ok"}
	f, p, s := setup(t, githubfake.Config{NoChecks: true})
	_, err := p.CreateCheckRun(t.Context(), run)
	if !errors.Is(err, ErrForbidden) || errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), `"permissions: checks: write"`) {
		t.Errorf("without checks: write: err = %v", err)
	}
	if len(f.CheckRuns()) != 0 || len(s.waits) != 0 {
		t.Errorf("made %d check runs, waited %v", len(f.CheckRuns()), s.waits)
	}
	_, p, _ = setup(t, githubfake.Config{ReadOnly: true})
	p.Fork = true
	if _, err := p.CreateCheckRun(t.Context(), run); !errors.Is(err, ErrReadOnly) {
		t.Errorf("fork: err = %v, want ErrReadOnly", err)
	}
}

// TestFakeRefusesCheckRunsGitHubWouldRefuse: the fake is as strict as GitHub — more than 50
// annotations in one request, an annotation_level outside notice/warning/failure, a summary
// over 65,535 characters, a completed run without a conclusion, a run without a name — each
// is a 422 and a problem.
func TestFakeRefusesCheckRunsGitHubWouldRefuse(t *testing.T) {
	ann := func(n int, level string) []*github.CheckRunAnnotation {
		var out []*github.CheckRunAnnotation
		for i := range n {
			out = append(
				out,
				&github.CheckRunAnnotation{
					Path:            github.String("ci.yaml"),
					StartLine:       github.Int(i + 1),
					EndLine:         github.Int(i + 1),
					AnnotationLevel: github.String(level),
					Message:         github.String("m"),
				},
			)
		}
		return out
	}
	out := func(summary string, a []*github.CheckRunAnnotation) *github.CheckRunOutput {
		return &github.CheckRunOutput{Title: github.String("t"), Summary: github.String(summary), Annotations: a}
	}
	tests := []struct {
		name    string
		opts    github.CreateCheckRunOptions
		problem string
	}{
		{
			"51 annotations",
			github.CreateCheckRunOptions{Name: "n", HeadSHA: head, Conclusion: github.String("failure"), Output: out("s", ann(51, "failure"))},
			"51 annotations in one request",
		},
		{
			"level error",
			github.CreateCheckRunOptions{Name: "n", HeadSHA: head, Conclusion: github.String("failure"), Output: out("s", ann(1, "error"))},
			"annotation_level must be notice, warning or failure",
		},
		{
			"long summary",
			github.CreateCheckRunOptions{Name: "n", HeadSHA: head, Conclusion: github.String("failure"), Output: out(strings.Repeat("é", 65536), nil)},
			"output.summary of 65536 characters",
		},
		{"no conclusion", github.CreateCheckRunOptions{Name: "n", HeadSHA: head, Status: github.String("completed")}, "completed without a conclusion"},
		{"no name", github.CreateCheckRunOptions{HeadSHA: head, Conclusion: github.String("success")}, "no name"},
		{"bad conclusion", github.CreateCheckRunOptions{Name: "n", HeadSHA: head, Conclusion: github.String("passed")}, `conclusion "passed"`},
		{
			"no summary",
			github.CreateCheckRunOptions{
				Name:       "n",
				HeadSHA:    head,
				Conclusion: github.String("success"),
				Output:     &github.CheckRunOutput{Title: github.String("t")},
			},
			"title or a summary",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := githubfake.New(githubfake.Config{Owner: "octo", Repo: "diffusion", Token: token})
			defer f.Close()
			p, err := New(Env{APIURL: f.URL(), Token: token, Repository: "octo/diffusion"}, &RetryTransport{MaxElapsed: time.Nanosecond})
			if err != nil {
				t.Fatal(err)
			}
			_, resp, err := p.API.Checks.CreateCheckRun(t.Context(), "octo", "diffusion", tt.opts)
			if err == nil || resp == nil || resp.StatusCode != 422 {
				t.Errorf("answered %v, want 422", err)
			}
			if ps := strings.Join(f.Problems(), "\n"); !strings.Contains(ps, tt.problem) {
				t.Errorf("problems %q, want %q", ps, tt.problem)
			}
		})
	}
}
