package githubfake

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// Check runs, as GitHub's Checks API takes them
// (https://docs.github.com/rest/checks/runs#create-a-check-run): every rule the API states
// is checked — a name, a full head SHA, the status and conclusion enums (a completed run
// needs a conclusion), an output with a title and a summary of at most 65,535 characters,
// at most 50 annotations per request, each with a path, lines, an annotation_level of
// notice, warning or failure, and a message. Annotations of an update are added to the
// run's, as GitHub adds them.

// MaxCheckText is GitHub's limit on a check run's output summary and text, in characters.
const MaxCheckText = 65535

// MaxAnnotationsPerRequest is how many annotations one create or update may carry.
const MaxAnnotationsPerRequest = 50

// CheckRun is a check run as the fake stores it.
type CheckRun struct {
	ID                        int64
	Name, HeadSHA, DetailsURL string
	Status, Conclusion        string
	Title, Summary, Text      string
	Annotations               []CheckAnnotation
	// Requests is how many requests (one create, then updates) made it.
	Requests int
}

// CheckAnnotation is one annotation of a check run.
type CheckAnnotation struct {
	Path                  string
	StartLine, EndLine    int
	Level, Title, Message string
}

var (
	httpURL     = regexp.MustCompile(`^https?://`)
	checkRunsRE = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/check-runs$`)
	checkRunRE  = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/check-runs/([0-9]+)$`)
)

// SetChecksWritable makes check run writes succeed (true, the default) or fail with 403, as
// GitHub answers a token whose job lacks "permissions: checks: write".
func (f *Fake) SetChecksWritable(ok bool) {
	f.mu.Lock()
	f.cfg.NoChecks = !ok
	f.mu.Unlock()
}

// CheckRuns returns the check runs made, in order.
func (f *Fake) CheckRuns() []CheckRun {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]CheckRun, len(f.checkRuns))
	for i, c := range f.checkRuns {
		out[i] = *c
		out[i].Annotations = slices.Clone(c.Annotations)
	}
	return out
}

type checkOutput struct {
	Title       *string `json:"title"`
	Summary     *string `json:"summary"`
	Text        *string `json:"text"`
	Annotations []struct {
		Path            *string `json:"path"`
		StartLine       *int    `json:"start_line"`
		EndLine         *int    `json:"end_line"`
		AnnotationLevel *string `json:"annotation_level"`
		Title           *string `json:"title"`
		Message         *string `json:"message"`
	} `json:"annotations"`
}

type checkRunBody struct {
	Name        *string      `json:"name"`
	HeadSHA     *string      `json:"head_sha"`
	DetailsURL  *string      `json:"details_url"`
	Status      *string      `json:"status"`
	Conclusion  *string      `json:"conclusion"`
	CompletedAt *string      `json:"completed_at"`
	Output      *checkOutput `json:"output"`
}

// checkRun serves POST …/check-runs (create) and PATCH …/check-runs/{id} (update). f.mu is held.
func (f *Fake) checkRun(w http.ResponseWriter, r *http.Request, m []string, body []byte) {
	var b checkRunBody
	if !f.repoOK(w, r, m) || !f.writable(w) {
		return
	}
	if f.cfg.NoChecks {
		writeError(w, http.StatusForbidden, "Resource not accessible by integration")
		return
	}
	if !f.decode(w, r, body, &b) {
		return
	}
	var run *CheckRun
	if r.Method == http.MethodPatch {
		id, _ := strconv.ParseInt(m[3], 10, 64)
		for _, c := range f.checkRuns {
			if c.ID == id {
				run = c
			}
		}
		if run == nil {
			writeError(w, http.StatusNotFound, "Not Found")
			return
		}
	} else {
		run = &CheckRun{}
		if b.Name == nil || *b.Name == "" {
			f.invalid(w, r, "no name")
			return
		}
		if b.HeadSHA == nil || !shaRE.MatchString(*b.HeadSHA) {
			f.invalid(w, r, "head_sha is not a full commit SHA")
			return
		}
	}
	next := *run
	next.Annotations = slices.Clone(run.Annotations)
	if bad := next.apply(b); bad != "" {
		f.invalid(w, r, bad)
		return
	}
	next.Requests++
	if run.ID == 0 {
		f.nextID++
		next.ID = f.nextID
		f.checkRuns = append(f.checkRuns, run)
	}
	*run = next
	writeJSON(w, map[bool]int{true: http.StatusCreated, false: http.StatusOK}[r.Method == http.MethodPost], map[string]any{
		"id": run.ID, "name": run.Name, "head_sha": run.HeadSHA, "status": run.Status, "conclusion": run.Conclusion,
		"html_url": fmt.Sprintf("https://github.com/%s/%s/runs/%d", f.cfg.Owner, f.cfg.Repo, run.ID),
	})
}

// invalid answers 422 for a body GitHub would refuse, and records the problem.
func (f *Fake) invalid(w http.ResponseWriter, r *http.Request, why string) {
	f.problem("%s %s: %s", r.Method, r.URL.Path, why)
	writeError(w, http.StatusUnprocessableEntity, "Validation Failed")
}

// apply checks a create or update body and applies it to c; it returns what GitHub would
// refuse ("" for nothing).
func (c *CheckRun) apply(b checkRunBody) string {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&c.Name, b.Name)
	set(&c.HeadSHA, b.HeadSHA)
	set(&c.DetailsURL, b.DetailsURL)
	set(&c.Status, b.Status)
	set(&c.Conclusion, b.Conclusion)
	if c.Status == "" {
		c.Status = "queued"
	}
	if !slices.Contains([]string{"queued", "in_progress", "completed"}, c.Status) {
		return fmt.Sprintf("status %q", c.Status)
	}
	if b.Conclusion != nil {
		if !slices.Contains([]string{"action_required", "cancelled", "failure", "neutral", "success", "skipped", "stale", "timed_out"}, *b.Conclusion) {
			return fmt.Sprintf("conclusion %q", *b.Conclusion)
		}
		c.Status = "completed" // GitHub: a conclusion makes the run completed
	}
	if c.Status == "completed" && c.Conclusion == "" {
		return "status completed without a conclusion"
	}
	if b.CompletedAt != nil {
		if _, err := time.Parse(time.RFC3339, *b.CompletedAt); err != nil {
			return fmt.Sprintf("completed_at %q is not an ISO 8601 time", *b.CompletedAt)
		}
	}
	if c.DetailsURL != "" && !httpURL.MatchString(c.DetailsURL) {
		return fmt.Sprintf("details_url %q", c.DetailsURL)
	}
	if b.Output == nil {
		return ""
	}
	return c.applyOutput(b.Output)
}

// applyOutput checks and applies a run's output: title, summary, text and annotations.
func (c *CheckRun) applyOutput(o *checkOutput) string {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	if o.Title == nil || *o.Title == "" || o.Summary == nil || *o.Summary == "" {
		return "output without a title or a summary (both are required)"
	}
	c.Title, c.Summary = *o.Title, *o.Summary
	set(&c.Text, o.Text)
	for what, s := range map[string]string{"summary": c.Summary, "text": c.Text} {
		if n := utf8.RuneCountInString(s); n > MaxCheckText {
			return fmt.Sprintf("output.%s of %d characters, GitHub's limit is %d", what, n, MaxCheckText)
		}
	}
	if len(o.Annotations) > MaxAnnotationsPerRequest {
		return fmt.Sprintf("%d annotations in one request, GitHub's limit is %d", len(o.Annotations), MaxAnnotationsPerRequest)
	}
	for i, a := range o.Annotations {
		switch {
		case a.Path == nil || *a.Path == "" || (*a.Path)[0] == '/':
			return fmt.Sprintf("annotations[%d]: path must be relative to the repository root", i)
		case a.StartLine == nil || a.EndLine == nil || *a.StartLine < 1 || *a.EndLine < *a.StartLine:
			return fmt.Sprintf("annotations[%d]: start_line and end_line are required, 1 ≤ start ≤ end", i)
		case a.AnnotationLevel == nil || !slices.Contains([]string{"notice", "warning", "failure"}, *a.AnnotationLevel):
			return fmt.Sprintf("annotations[%d]: annotation_level must be notice, warning or failure", i)
		case a.Message == nil || *a.Message == "":
			return fmt.Sprintf("annotations[%d]: no message", i)
		case utf8.RuneCountInString(*a.Message) > 64<<10:
			return fmt.Sprintf("annotations[%d]: message over 64 KiB", i)
		}
		an := CheckAnnotation{Path: *a.Path, StartLine: *a.StartLine, EndLine: *a.EndLine, Level: *a.AnnotationLevel, Message: *a.Message}
		set(&an.Title, a.Title)
		c.Annotations = append(c.Annotations, an)
	}
	return ""
}
