package gh

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/internal/githubfake"
)

const (
	token = "ghs_test_token_123"
	head  = "0123456789abcdef0123456789abcdef01234567"
)

// sleeper records the waits a RetryTransport asks for, without waiting.
type sleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeper) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeper) total() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var t time.Duration
	for _, d := range s.waits {
		t += d
	}
	return t
}

// setup starts a fake GitHub and a Client whose real go-github client talks to it through
// oauth2 and a RetryTransport that does not really sleep.
func setup(t *testing.T, cfg githubfake.Config, opts ...func(*RetryTransport)) (*githubfake.Fake, *Client, *sleeper) {
	t.Helper()
	cfg.Owner, cfg.Repo, cfg.Token = "octo", "diffusion", token
	f := githubfake.NewT(t, cfg)
	s := &sleeper{}
	rt := &RetryTransport{Sleep: s.sleep, MaxElapsed: time.Minute, Jitter: func() float64 { return 0.5 }}
	for _, o := range opts {
		o(rt)
	}
	c, err := New(Env{APIURL: f.URL() + "/api/v3", Token: token, Repository: "octo/diffusion"}, rt)
	if err != nil {
		t.Fatal(err)
	}
	self := ActionsBot
	c.Self = &self
	return f, c, s
}

// marker is the first line of the comments of key "base"; markerOf another key's.
const marker = "<!-- diffusion-check:base -->"

func markerOf(key string) string { return "<!-- diffusion-check:" + key + " -->" }

// body is a comment of key "base" that says text.
func body(text string) string { return marker + "\n" + text }

func ours(cs []githubfake.Comment) []githubfake.Comment {
	var out []githubfake.Comment
	for _, c := range cs {
		if strings.Contains(c.Body, marker) {
			out = append(out, c)
		}
	}
	return out
}

// TestPublishTwice: the first publish creates the comment, the second finds it among 250
// others on the last of many pages and edits it in place; the statuses go on the head SHA.
func TestPublishTwice(t *testing.T) {
	f, p, _ := setup(t, githubfake.Config{PageSize: 30})
	ctx := t.Context()
	for i := range 250 {
		f.AddComment(7, "reviewer", fmt.Sprintf("comment %d", i))
	}
	first, err := p.UpsertComment(ctx, 7, marker, body("4 of 6 requests failed"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		f.AddComment(7, "reviewer", fmt.Sprintf("later comment %d", i))
	}
	prev, err := p.FindComment(ctx, 7, marker)
	if err != nil || prev == nil || prev.ID != first.ID {
		t.Fatalf("FindComment = %+v, %v; want comment %d", prev, err, first.ID)
	}
	second, err := p.UpsertComment(ctx, 7, marker, body("all 4 requests passed"))
	if err != nil {
		t.Fatal(err)
	}
	if second.ID != first.ID {
		t.Errorf("second publish made comment %d, want %d edited", second.ID, first.ID)
	}
	got := ours(f.Comments(7))
	if len(got) != 1 || !strings.Contains(got[0].Body, "all 4 requests passed") {
		t.Errorf("comments after two publishes: %+v", got)
	}
	if n := len(f.Comments(7)); n != 256 {
		t.Errorf("%d comments on the PR, want 256 (others untouched)", n)
	}
	st := Status{
		Context:     "diffusion-check/base",
		State:       "success",
		Description: "all 4 requests passed",
		TargetURL:   "https://github.com/octo/diffusion/actions/runs/1",
	}
	if err := p.SetStatus(ctx, head, st); err != nil {
		t.Fatal(err)
	}
	want := []githubfake.Status{{SHA: head, State: "success", Context: "diffusion-check/base", Description: "all 4 requests passed", TargetURL: st.TargetURL}}
	if diff := cmp.Diff(want, f.Statuses()); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}

// TestDuplicates: a race left three comments of the key; the oldest is kept and edited.
func TestDuplicates(t *testing.T) {
	f, p, _ := setup(t, githubfake.Config{PageSize: 2})
	for i := range 3 {
		f.AddComment(7, "github-actions[bot]", marker+fmt.Sprintf("\nold %d", i))
		f.AddComment(7, "reviewer", "lgtm")
	}
	f.AddComment(7, "github-actions[bot]", markerOf("other")+"\nanother key")
	oldest := ours(f.Comments(7))[0].ID
	c, err := p.UpsertComment(t.Context(), 7, marker, body("all 4 requests passed"))
	if err != nil {
		t.Fatal(err)
	}
	got := ours(f.Comments(7))
	if len(got) != 1 || got[0].ID != oldest || c.ID != oldest || !strings.Contains(got[0].Body, "all 4 requests passed") {
		t.Errorf("after upsert: %+v, want only comment %d, edited", got, oldest)
	}
	if n := len(f.Comments(7)); n != 5 {
		t.Errorf("%d comments left, want 5 (3 reviews, one of ours, one of another key)", n)
	}
}

// TestConcurrentPublish: two publishes at once end with exactly one comment.
func TestConcurrentPublish(t *testing.T) {
	for round := range 20 {
		f, p, _ := setup(t, githubfake.Config{PageSize: 3})
		f.AddComment(9, "reviewer", "first!")
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range 2 {
			wg.Go(func() {
				_, errs[i] = p.UpsertComment(t.Context(), 9, marker, body(fmt.Sprintf("run #%d", i)))
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		if got := ours(f.Comments(9)); len(got) != 1 {
			t.Fatalf("round %d: %d comments of the key after two concurrent publishes, want 1", round, len(got))
		}
	}
}

// TestRetries: each transient failure GitHub answers with is retried, waiting as asked, and
// the write succeeds; a 403 that is not a rate limit is not retried.
func TestRetries(t *testing.T) {
	const statuses = "/repos/octo/diffusion/statuses/"
	tests := []struct {
		name   string
		faults []githubfake.Fault
		waits  []time.Duration // nil: backoff, only counted
		n      int
	}{
		{"502 twice", []githubfake.Fault{{Method: "POST", Path: statuses, Code: 502, Times: 2}}, nil, 2},
		{"503", []githubfake.Fault{{Path: statuses, Code: 503}}, nil, 1},
		{"429 with Retry-After", []githubfake.Fault{{Path: statuses, Code: 429, RetryAfter: "7"}}, []time.Duration{7 * time.Second}, 1},
		{"secondary rate limit", []githubfake.Fault{githubfake.SecondaryRateLimit("POST", statuses, "3")}, []time.Duration{3 * time.Second}, 1},
		// No Retry-After, no X-RateLimit-Reset: GitHub asks for at least a minute ("Rate limits
		// for the REST API"), longer each time.
		{"secondary rate limit, no header", []githubfake.Fault{githubfake.SecondaryRateLimit("POST", statuses, "")}, []time.Duration{time.Minute}, 1},
		{"429, no header", []githubfake.Fault{{Path: statuses, Code: 429}}, []time.Duration{time.Minute}, 1},
		{"primary rate limit", []githubfake.Fault{{Path: statuses, Code: 403, RateLimitReset: 20 * time.Second, Message: "API rate limit exceeded"}}, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, p, s := setup(t, githubfake.Config{})
			f.Inject(tt.faults...)
			began := time.Now()
			if err := p.SetStatus(t.Context(), head, Status{Context: "diffusion-check/base", State: "pending", Description: "running",
				TargetURL: "https://example.com/run"}); err != nil {
				t.Fatal(err)
			}
			took := time.Since(began)
			if len(f.Statuses()) != 1 || len(f.Pending()) != 0 {
				t.Errorf("statuses %v, faults left %v", f.Statuses(), f.Pending())
			}
			if len(s.waits) != tt.n {
				t.Errorf("waited %v, want %d waits", s.waits, tt.n)
			}
			if tt.waits != nil {
				if diff := cmp.Diff(tt.waits, s.waits); diff != "" {
					t.Errorf("waits (-want +got):\n%s", diff)
				}
			}
			// The reset is the fake's clock + 20 s, rounded down to the second; the wait is it
			// less the transport's clock, + 1 s: in (20 s − the time the call took, 21 s].
			if w := s.waits[0]; tt.name == "primary rate limit" && (w <= 20*time.Second-took || w > 21*time.Second) {
				t.Errorf("waited %v for a reset 20 s away (the call took %v)", w, took)
			}
		})
	}
}

// TestSecondaryLimitWaitsLongerEachTime: a rate limit that names no time waits a minute, then
// two, within the budget; past it the rate limit is the error, naming the wait.
func TestSecondaryLimitWaitsLongerEachTime(t *testing.T) {
	const statuses = "/repos/octo/diffusion/statuses/"
	f, p, s := setup(t, githubfake.Config{}, func(rt *RetryTransport) { rt.MaxElapsed = 3 * time.Minute })
	f.Inject(githubfake.Fault{Method: "POST", Path: statuses, Code: 403, Times: 2, Message: "You have exceeded a secondary rate limit."})
	if err := p.SetStatus(t.Context(), head, Status{Context: "diffusion-check/base", State: "pending"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]time.Duration{time.Minute, 2 * time.Minute}, s.waits); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	f, p, _ = setup(t, githubfake.Config{}, func(rt *RetryTransport) { rt.MaxElapsed = 90 * time.Second })
	f.Inject(githubfake.Fault{Method: "POST", Path: statuses, Code: 403, Times: 5, Message: "You have exceeded a secondary rate limit."})
	err := p.SetStatus(t.Context(), head, Status{Context: "diffusion-check/base", State: "pending"})
	var rl *RateLimitError
	if !errors.As(err, &rl) || rl.Wait != 2*time.Minute || rl.Attempts != 2 {
		t.Errorf("past the budget: %v", err)
	}
}

// TestWritesAreSpaced: on the fake clock, writes (POST, PATCH, PUT, DELETE) start at least
// WriteSpacing apart, as GitHub asks of content creation ("at least one second between each
// request"); reads are not held, and a write after a long pause is not held either.
func TestWritesAreSpaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var mu sync.Mutex
		var at []string
		github := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			at = append(at, fmt.Sprintf("%s %v", r.Method, time.Since(start)))
			mu.Unlock()
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}")), Request: r}, nil
		})
		rt := &RetryTransport{Base: github, WriteSpacing: time.Second}
		hc := &http.Client{Transport: rt}
		do := func(method string) {
			req, err := http.NewRequestWithContext(t.Context(), method, "https://api.github.com/repos/o/r/x", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() { do(http.MethodPost) })
		}
		wg.Wait()
		do(http.MethodGet)
		do(http.MethodPatch)
		time.Sleep(5 * time.Second)
		do(http.MethodDelete)
		want := []string{"POST 0s", "POST 1s", "POST 2s", "GET 2s", "PATCH 3s", "DELETE 8s"}
		if diff := cmp.Diff(want, at); diff != "" {
			t.Errorf("arrivals (-want +got):\n%s", diff)
		}
	})
}

// TestGiveUp: a GitHub that keeps failing is given up on within MaxElapsed.
func TestGiveUp(t *testing.T) {
	f, p, s := setup(t, githubfake.Config{})
	f.Inject(githubfake.Fault{Code: 502, Times: 1000})
	err := p.SetStatus(t.Context(), head, Status{Context: "diffusion-check/base", State: "pending"})
	if err == nil || errors.Is(err, ErrReadOnly) {
		t.Fatalf("err = %v, want a 502 error", err)
	}
	if !strings.Contains(err.Error(), "502") || !strings.Contains(err.Error(), "diffusion-check/base") {
		t.Errorf("error %q does not say what failed and how", err)
	}
	if tot := s.total(); tot > time.Minute || tot < 30*time.Second {
		t.Errorf("waited %v in total, want close to (not over) the 1 minute bound", tot)
	}
}

// TestSlow: a response slower than the per-attempt bound is abandoned at the bound and
// retried. On a fake clock (synctest) with a GitHub in memory whose first answer never comes:
// with a real server the healthy retry too would have to beat the 100 ms bound, which a
// loaded machine does not promise.
func TestSlow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var ended []time.Duration // when each attempt ended
		github := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if len(ended) == 0 {
				<-r.Context().Done()
				ended = append(ended, time.Since(start))
				return nil, r.Context().Err()
			}
			ended = append(ended, time.Since(start))
			return &http.Response{StatusCode: http.StatusCreated, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}")), Request: r}, nil
		})
		s := &sleeper{}
		rt := &RetryTransport{Base: github, Attempt: 100 * time.Millisecond, Sleep: s.sleep, Jitter: func() float64 { return 0.5 }}
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "https://api.github.com/repos/octo/diffusion/statuses/"+head, nil)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated || len(s.waits) != 1 {
			t.Errorf("status %d after waits %v: want 201 after one retry", resp.StatusCode, s.waits)
		}
		// The sleeper does not advance the clock: both attempts end 100 ms in.
		if diff := cmp.Diff([]time.Duration{100 * time.Millisecond, 100 * time.Millisecond}, ended); diff != "" {
			t.Errorf("attempts ended at (-want +got):\n%s", diff)
		}
	})
}

// TestReadOnly: a fork's token is refused on every write; the error says so.
func TestReadOnly(t *testing.T) {
	_, p, s := setup(t, githubfake.Config{ReadOnly: true})
	p.Fork = true
	_, err := p.UpsertComment(t.Context(), 7, marker, body("all 4 requests passed"))
	if !errors.Is(err, ErrReadOnly) {
		t.Errorf("comment: err = %v, want ErrReadOnly", err)
	}
	err = p.SetStatus(t.Context(), head, Status{Context: "diffusion-check/base", State: "success"})
	if !errors.Is(err, ErrReadOnly) {
		t.Errorf("status: err = %v, want ErrReadOnly", err)
	}
	if len(s.waits) != 0 {
		t.Errorf("retried a permission refusal: %v", s.waits)
	}
}

func TestParseEvent(t *testing.T) {
	tests := []struct {
		name, payload string
		want          Event
		err           string
	}{
		{
			"pull_request",
			`{"number": 7, "pull_request": {"number": 7, "head": {"sha": "` + head +
				`"}, "merge_commit_sha": "ffffffffffffffffffffffffffffffffffffffff"}, "repository": {"full_name": "octo/diffusion"}}`,
			Event{Number: 7, HeadSHA: head, Repo: "octo/diffusion"},
			"",
		},
		{
			"workflow_run",
			`{"workflow_run": {"head_sha": "` + head + `", "pull_requests": [{"number": 12, "head": {"sha": "` + head +
				`"}}]}, "repository": {"full_name": "octo/diffusion"}}`,
			Event{Number: 12, HeadSHA: head, Repo: "octo/diffusion", WorkflowRun: true},
			"",
		},
		{
			"workflow_run of a fork lists no pull request",
			`{"workflow_run": {"head_sha": "` + head + `", "head_branch": "main", "head_repository": {"full_name": "mallory/diffusion"}, ` +
				`"pull_requests": []}, "repository": {"full_name": "octo/diffusion"}}`,
			Event{HeadSHA: head, Repo: "octo/diffusion", HeadRepo: "mallory/diffusion", HeadBranch: "main", WorkflowRun: true},
			"",
		},
		{
			"workflow_run whose pull request moved on",
			`{"workflow_run": {"head_sha": "` + head + `", "pull_requests": [{"number": 12, "head": {"sha": "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}}]}}`,
			Event{HeadSHA: head, WorkflowRun: true},
			"",
		},
		{
			"pull_request_target from a fork",
			`{"number": 7, "pull_request": {"number": 7, "head": {"sha": "` + head +
				`", "ref": "fix", "repo": {"full_name": "mallory/diffusion"}}}, "repository": {"full_name": "octo/diffusion"}}`,
			Event{Number: 7, HeadSHA: head, Repo: "octo/diffusion", HeadRepo: "mallory/diffusion", HeadBranch: "fix"},
			"",
		},
		{"push", `{"after": "` + head + `"}`, Event{HeadSHA: head}, ""},
		{"no sha", `{"pull_request": {"number": 3}}`, Event{}, "no head commit"},
		{"bad sha", `{"after": "main"}`, Event{}, `"main" is not a commit SHA`},
		{"not json", `{`, Event{}, "event payload"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseEvent([]byte(tt.payload))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzParseEvent(f *testing.F) {
	f.Add([]byte(`{"number": 7, "pull_request": {"number": 7, "head": {"sha": "` + head + `"}}}`))
	f.Add([]byte(`{"workflow_run": {"head_sha": "` + head + `", "pull_requests": []}}`))
	f.Add([]byte(`{"after": "` + head + `"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := ParseEvent(data)
		if err != nil {
			return
		}
		if !isSHA(ev.HeadSHA) || ev.Number < 0 {
			t.Errorf("accepted %+v", ev)
		}
	})
}

// TestRecreateComment: recreate posts the report as a new comment after everything else on
// the PR and deletes this token's earlier comments of the key (duplicates of a race included),
// never a comment of another key or another account, even one that starts with the marker.
func TestRecreateComment(t *testing.T) {
	f, p, _ := setup(t, githubfake.Config{PageSize: 2})
	for i := range 2 {
		f.AddComment(7, "github-actions[bot]", marker+fmt.Sprintf("\nold %d", i))
	}
	f.AddComment(7, "reviewer", marker+"\nquoting the bot")
	f.AddComment(7, "github-actions[bot]", markerOf("other")+"\nanother key")
	f.AddComment(7, "reviewer", "lgtm")
	c, err := p.RecreateComment(t.Context(), 7, marker, body("all 4 requests passed"))
	if err != nil {
		t.Fatal(err)
	}
	all := f.Comments(7)
	last := all[len(all)-1]
	if last.ID != c.ID || last.Body != body("all 4 requests passed") {
		t.Errorf("the last comment is %+v, want the new report %d", last, c.ID)
	}
	var bots []string
	for _, x := range all {
		if x.User == "github-actions[bot]" {
			bots = append(bots, x.Body)
		}
	}
	if want := []string{markerOf("other") + "\nanother key", body("all 4 requests passed")}; !cmp.Equal(bots, want) {
		t.Errorf("the bot's comments: %q, want %q", bots, want)
	}
	if len(all) != 4 {
		t.Errorf("%d comments left, want 4 (the reviewer's two, the other key's, the new report)", len(all))
	}
	if _, err := p.RecreateComment(t.Context(), 7, marker, "no marker"); err == nil {
		t.Error("a body without the marker line was posted")
	}
}
