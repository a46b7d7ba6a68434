package publish

import (
	"bytes"
	"context"
	"errors"
	"image"
	stdpng "image/png"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/internal/gh"
	"github.com/diffusion-check/diffusion-check/internal/githubfake"
	"github.com/diffusion-check/diffusion-check/internal/pictures"
	"github.com/diffusion-check/diffusion-check/judge"
	"github.com/diffusion-check/diffusion-check/report"
	"github.com/diffusion-check/diffusion-check/results"
)

const (
	token = "ghs_publish_test"
	head  = "0123456789abcdef0123456789abcdef01234567"
)

// fakeRun records what Publish tells the workflow run.
type fakeRun struct {
	mu        sync.Mutex
	notices   []string
	warnings  []string
	summaries []string
}

func (r *fakeRun) Notice(msg string) { r.mu.Lock(); r.notices = append(r.notices, msg); r.mu.Unlock() }
func (r *fakeRun) Warning(msg string) {
	r.mu.Lock()
	r.warnings = append(r.warnings, msg)
	r.mu.Unlock()
}
func (r *fakeRun) AddSummary(md string) error {
	r.mu.Lock()
	r.summaries = append(r.summaries, md)
	r.mu.Unlock()
	return nil
}

// client is a real gh.Client on fake f, through rt's transport (nil: f's server).
func client(t *testing.T, f *githubfake.Fake, base http.RoundTripper) *gh.Client {
	t.Helper()
	c, err := gh.New(gh.Env{APIURL: f.URL() + "/api/v3", Token: token, Repository: "octo/diffusion"},
		&gh.RetryTransport{Base: base, MaxElapsed: time.Minute, Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// lane is a merged lane of one case with one request of status st, tested on commit.
func lane(name string, st results.Status, commit string) results.Result {
	r := results.Result{Schema: results.Schema, Suite: "ci", Lane: name, Commit: commit, Partition: results.Partition{Total: 1},
		Cases: []results.CaseResult{{ID: "t2i", Server: "ref", Modality: "image", Requests: []results.RequestResult{
			{Index: 1, Of: 1, Status: st, Checks: []results.Check{{Name: results.OutputPresent, Status: st}}}}}}}
	judge.Finalize(&r)
	return r
}

func options(run *fakeRun, log *bytes.Buffer) Options {
	return Options{
		Event:   gh.Event{Number: 7, HeadSHA: head},
		Env:     gh.Env{ServerURL: "https://github.com", Repository: "octo/diffusion", RunID: "42"},
		Comment: CommentAlways, Budget: time.Minute, Now: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC),
		Log: log, Run: run,
	}
}

// writes are the requests of f that write, and the comment reads, in order.
func writes(f *githubfake.Fake) []string {
	var out []string
	for _, r := range f.Requests() {
		method, path, _ := strings.Cut(r, " ")
		path = strings.TrimPrefix(path, "/repos/octo/diffusion")
		switch {
		case strings.HasPrefix(path, "/statuses/"):
			path = "/statuses"
		case strings.HasPrefix(path, "/issues/comments/"):
			path = "/issues/comments/ID"
		}
		out = append(out, method+" "+path)
	}
	return out
}

// TestPublishOrder: the statuses go first (branch protection reads them), the check runs
// next, and the comment last, after finding the token's account and the previous comment;
// one status and one check run per lane. (No pictures: the results have none.) The token is
// the workflow's GITHUB_TOKEN (the fake's default actor, github-actions[bot]; "ghs_" is an
// installation token's prefix): GET /user refuses it with 403, so the account comes from
// GraphQL's viewer, which a GHES API (/api/v3) serves at /api/graphql (gh.Identity).
func TestPublishOrder(t *testing.T) {
	f := githubfake.NewT(t, githubfake.Config{Owner: "octo", Repo: "diffusion", Token: token})
	f.AddPull(githubfake.Pull{Number: 7, HeadSHA: head})
	run, log := &fakeRun{}, &bytes.Buffer{}
	rep := &report.Report{Key: "default", Lanes: []results.Result{lane("base", results.Fail, head), lane("extra", results.Pass, head)}}
	out, err := Publish(t.Context(), client(t, f, nil), rep, nil, options(run, log))
	if err != nil {
		t.Fatalf("Publish: %v\n%s", err, log)
	}
	want := []string{
		"POST /statuses", "POST /statuses",
		"POST /check-runs", "POST /check-runs",
		"GET /user", "POST /api/graphql", // the token's account: GET /user refuses an installation token
		"GET /issues/7/comments",                                                      // the previous comment
		"GET /commits/" + head + "/status",                                            // the other lanes
		"GET /pulls/7",                                                                // is head still the pull request's head?
		"GET /issues/7/comments", "POST /issues/7/comments", "GET /issues/7/comments", // the upsert
		"GET /commits/" + head + "/status", // did another lane change meanwhile?

	}
	if diff := cmp.Diff(want, writes(f)); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if out.CommentURL == "" || out.ReadOnly {
		t.Errorf("outputs %+v, want a comment URL and not read-only", out)
	}
	var got []string
	for _, s := range f.Statuses() {
		got = append(got, s.Context+" "+s.State)
	}
	if diff := cmp.Diff([]string{"diffusion-check/base failure", "diffusion-check/extra success"}, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}

// TestPublishOtherCommitWritesNothing: results of another commit are refused before any
// request.
func TestPublishOtherCommitWritesNothing(t *testing.T) {
	f := githubfake.NewT(t, githubfake.Config{Owner: "octo", Repo: "diffusion", Token: token})
	rep := &report.Report{Key: "default", Lanes: []results.Result{lane("base", results.Pass, strings.Repeat("a", 40))}}
	_, err := Publish(t.Context(), client(t, f, nil), rep, nil, options(&fakeRun{}, &bytes.Buffer{}))
	if err == nil || !strings.Contains(err.Error(), "nothing was published") {
		t.Errorf("err = %v, want the other commit refused", err)
	}
	if rs := f.Requests(); len(rs) != 0 {
		t.Errorf("requests %q, want none", rs)
	}
}

// TestPublishReadOnlyFallsBackToTheSummary: a fork's read-only token fails no report: the
// report goes to the job summary (once: not when the caller writes it there itself), the
// notice says how to publish for forks, and Publish returns no error.
func TestPublishReadOnlyFallsBackToTheSummary(t *testing.T) {
	for _, summarized := range []bool{false, true} {
		f := githubfake.NewT(t, githubfake.Config{Owner: "octo", Repo: "diffusion", Token: token, ReadOnly: true})
		c := client(t, f, nil)
		c.Fork = true
		run, log := &fakeRun{}, &bytes.Buffer{}
		opts := options(run, log)
		opts.Summarized = summarized
		rep := &report.Report{Key: "default", Lanes: []results.Result{lane("base", results.Fail, head)}}
		out, err := Publish(t.Context(), c, rep, nil, opts)
		if err != nil || !out.ReadOnly {
			t.Fatalf("Publish = %+v, %v; want read-only and no error", out, err)
		}
		if want := 1; summarized {
			if len(run.summaries) != 0 {
				t.Errorf("summarized: %d summaries added, want none", len(run.summaries))
			}
		} else if len(run.summaries) != want || !strings.Contains(run.summaries[0], "diffusion-check") {
			t.Errorf("%d summaries added, want the report once", len(run.summaries))
		}
		if !slices.Contains(run.notices, readOnlyNotice) {
			t.Errorf("notices %q, want the read-only notice", run.notices)
		}
	}
}

// TestPublishRefusalIsAnError: a 403 outside a fork's pull request (a permissions: block
// without statuses: write) is an error, not the read-only fallback; the check runs and the
// comment are still tried.
func TestPublishRefusalIsAnError(t *testing.T) {
	f := githubfake.NewT(t, githubfake.Config{Owner: "octo", Repo: "diffusion", Token: token})
	f.Inject(githubfake.Fault{Method: http.MethodPost, Path: "/repos/octo/diffusion/statuses/", Code: http.StatusForbidden,
		Message: "Resource not accessible by integration"})
	run := &fakeRun{}
	rep := &report.Report{Key: "default", Lanes: []results.Result{lane("base", results.Pass, head)}}
	out, err := Publish(t.Context(), client(t, f, nil), rep, nil, options(run, &bytes.Buffer{}))
	if err == nil || readOnly(err) || !errors.Is(err, gh.ErrForbidden) {
		t.Fatalf("err = %v, want the refused status", err)
	}
	if out.CommentURL == "" || len(f.CheckRuns()) != 1 {
		t.Errorf("comment %q, %d check runs: want both written despite the status", out.CommentURL, len(f.CheckRuns()))
	}
}

// TestPublishBudgetIsOneDeadline: against a GitHub that never answers, Publish gives up once
// Options.Budget has passed (on the bubble's clock), whatever the number of requests.
func TestPublishBudgetIsOneDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := githubfake.NewLocal(githubfake.Config{Owner: "octo", Repo: "diffusion", Token: token})
		f.Inject(githubfake.Fault{Delay: 24 * time.Hour, Times: 1 << 20})
		opts := options(&fakeRun{}, &bytes.Buffer{})
		opts.Budget = 5 * time.Second
		rep := &report.Report{Key: "default", Lanes: []results.Result{lane("base", results.Pass, head), lane("extra", results.Pass, head)}}
		start := time.Now()
		_, err := Publish(t.Context(), client(t, f, f.Transport()), rep, nil, opts)
		if took := time.Since(start); took > opts.Budget {
			t.Errorf("Publish took %v, want at most the %v budget", took, opts.Budget)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want the deadline", err)
		}
	})
}

// TestPicturesGetAThirdOfTheBudget: against a git data API that never answers, the pictures
// give up once a third of the budget has passed (on the bubble's clock), with a notice, and
// the check runs and the comment are still written within the budget.
func TestPicturesGetAThirdOfTheBudget(t *testing.T) {
	dir := t.TempDir()
	rep := &report.Report{Key: "default", Lanes: []results.Result{lane("base", results.Fail, head)}}
	pic := filepath.Join(dir, results.ArtifactsDir, "t2i", "request-1", pictures.FilePrefix+"0.png")
	if err := os.MkdirAll(filepath.Dir(pic), 0o755); err != nil {
		t.Fatal(err)
	}
	var png bytes.Buffer
	if err := stdpng.Encode(&png, image.NewRGBA(image.Rect(0, 0, 8, 8))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pic, png.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// The failed request's record names its picture, as the run writes it.
	rr := &rep.Lanes[0].Cases[0].Requests[0]
	rr.Pictures = []results.Picture{{Kind: results.PictureConsistency, Path: results.ArtifactsDir + "/t2i/request-1/" + pictures.FilePrefix + "0.png"}}
	inputs := []results.Input{{File: filepath.Join(dir, results.ResultsFile), Result: &rep.Lanes[0]}}
	synctest.Test(t, func(t *testing.T) {
		f := githubfake.NewLocal(githubfake.Config{Owner: "octo", Repo: "diffusion", Token: token})
		f.Inject(githubfake.Fault{Path: "/repos/octo/diffusion/git/", Delay: 24 * time.Hour, Times: 1 << 20})
		run := &fakeRun{}
		opts := options(run, &bytes.Buffer{})
		opts.Budget, opts.PicturesBranch = 30*time.Second, gh.DefaultAssetsBranch
		start := time.Now()
		out, err := Publish(t.Context(), client(t, f, f.Transport()), rep, inputs, opts)
		if took := time.Since(start); took != opts.Budget/3 {
			t.Errorf("Publish took %v, want the pictures' third of the budget, %v", took, opts.Budget/3)
		}
		if err != nil || out.CommentURL == "" || len(f.CheckRuns()) != 1 {
			t.Errorf("Publish = %+v, %v, %d check runs; want the comment and the check run written", out, err, len(f.CheckRuns()))
		}
		if len(run.notices) != 1 || !strings.Contains(run.notices[0], "did not upload 1 failure pictures") {
			t.Errorf("notices %q, want the pictures' one", run.notices)
		}
	})
}

// A report of an earlier push sets its own commit's statuses, and leaves the comment to the
// push the pull request shows now: the comment keeps that push's results, and the log and the
// job summary say why nothing was written.
func TestEarlierPushLeavesTheComment(t *testing.T) {
	const newer = "fedcba9876543210fedcba9876543210fedcba98"
	f := githubfake.NewT(t, githubfake.Config{Owner: "octo", Repo: "diffusion", Token: token})
	f.AddPull(githubfake.Pull{Number: 7, HeadSHA: head})
	run, log := &fakeRun{}, &bytes.Buffer{}
	// Push B's report first: its comment.
	optsB := options(run, log)
	optsB.Event.HeadSHA = newer
	f.Push(7, newer)
	repB := &report.Report{Key: "default", Lanes: []results.Result{lane("base", results.Pass, newer)}}
	if _, err := Publish(t.Context(), client(t, f, nil), repB, nil, optsB); err != nil {
		t.Fatalf("Publish B: %v\n%s", err, log)
	}
	before := f.Comments(7)
	// Push A's late report: statuses on A, the comment untouched.
	repA := &report.Report{Key: "default", Lanes: []results.Result{lane("base", results.Fail, head)}}
	out, err := Publish(t.Context(), client(t, f, nil), repA, nil, options(run, log))
	if err != nil || out.CommentURL != "" {
		t.Fatalf("Publish A: %v, comment %q\n%s", err, out.CommentURL, log)
	}
	if diff := cmp.Diff(before, f.Comments(7)); diff != "" {
		t.Errorf("the earlier push changed the comment (-before +after):\n%s", diff)
	}
	var onA []string
	for _, s := range f.Statuses() {
		if s.SHA == head {
			onA = append(onA, s.State)
		}
	}
	if !slices.Equal(onA, []string{"failure"}) {
		t.Errorf("statuses on A: %v, want its failure", onA)
	}
	const why = "PR comment: not written: #7's head moved on to " + newer + ", and these are the results of an earlier push, " + head
	if !strings.Contains(log.String(), why) || len(run.summaries) == 0 || !strings.Contains(run.summaries[len(run.summaries)-1], why) {
		t.Errorf("log and summary do not say why:\n%s\n%q", log, run.summaries)
	}
}

// A read of the statuses that never answers spends a share of the budget, not all of it: the
// comment is still written, without the other lanes' news.
func TestStatusReadThatHangsStillComments(t *testing.T) {
	f := githubfake.NewT(t, githubfake.Config{Owner: "octo", Repo: "diffusion", Token: token})
	f.AddPull(githubfake.Pull{Number: 7, HeadSHA: head})
	f.Inject(githubfake.Fault{Method: "GET", Path: "/repos/octo/diffusion/commits/" + head + "/status", Delay: time.Hour, Times: 1})
	run, log := &fakeRun{}, &bytes.Buffer{}
	opts := options(run, log)
	opts.Budget = 8 * time.Second
	rep := &report.Report{Key: "default", Lanes: []results.Result{lane("base", results.Pass, head)}}
	out, err := Publish(t.Context(), client(t, f, nil), rep, nil, opts)
	if err != nil || out.CommentURL == "" {
		t.Fatalf("Publish: %v, comment %q\n%s", err, out.CommentURL, log)
	}
	if !strings.Contains(log.String(), "other lanes are shown as the previous comment recorded them") {
		t.Errorf("log does not say the read was given up:\n%s", log)
	}
}

// TestFindPicturesReadsTheRecord: the pictures come from the records (results.Picture), in
// order (memory first, then each failed request's consistency and repeat pictures); a path the
// record names that is absolute, leaves the output folder or is not an artifact (a results
// file is the pull request's to write) is left out and said, never read.
func TestFindPicturesReadsTheRecord(t *testing.T) {
	dir := t.TempDir()
	r := lane("base", results.Fail, head)
	r.Cases[0].Requests[0].Pictures = []results.Picture{
		{Kind: results.PictureRepeat, Path: "artifacts/t2i/request-1/consistency-repeat-frame-0.png"},
		{Kind: results.PictureConsistency, Path: "artifacts/t2i/request-1/consistency-frame-0.png"},
	}
	hostile := lane("extra", results.Fail, head)
	hostile.Cases[0].ID = "evil"
	hostile.Cases[0].Requests[0].Pictures = []results.Picture{{Kind: results.PictureConsistency, Path: "../../../etc/passwd"}}
	absolute := lane("abs", results.Fail, head)
	absolute.Cases[0].Requests[0].Pictures = []results.Picture{{Kind: results.PictureConsistency, Path: "/etc/passwd"}}
	outside := lane("logs", results.Fail, head)
	outside.Cases[0].Requests[0].Pictures = []results.Picture{{Kind: results.PictureConsistency, Path: "servers/01-ref/server.log"}}
	file := filepath.Join(dir, results.ResultsFile)
	var log bytes.Buffer
	got := findPictures([]results.Input{{File: file, Result: &r}, {File: file, Result: &hostile}, {File: file, Result: &absolute}, {File: file,
		Result: &outside}}, &log)
	want := []failurePicture{
		{key: report.PictureKey{Lane: "base", Case: "t2i", Request: 1}, file: filepath.Join(dir, "artifacts/t2i/request-1/consistency-frame-0.png")},
		{key: report.PictureKey{Lane: "base", Case: "t2i", Request: 1, Repeat: true}, file: filepath.Join(dir,
			"artifacts/t2i/request-1/consistency-repeat-frame-0.png")},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(failurePicture{})); diff != "" {
		t.Errorf("pictures (-want +got):\n%s", diff)
	}
	for _, p := range []string{`"../../../etc/passwd" is not a file under artifacts/`, `"/etc/passwd" is not a file under artifacts/`,
		`"servers/01-ref/server.log" is not a file under artifacts/`} {
		if !strings.Contains(log.String(), p) {
			t.Errorf("log lacks %q:\n%s", p, log.String())
		}
	}
}
