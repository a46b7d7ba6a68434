package publish

import (
	"bytes"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/internal/githubfake"
	"github.com/diffusion-check/diffusion-check/report"
	"github.com/diffusion-check/diffusion-check/results"
)

// hook calls before on every request, then sends it.
type hook struct {
	base   http.RoundTripper
	before func(*http.Request)
	// after, when set, runs once the answer has come: the fake has handled the request.
	after func(*http.Request)
}

func (h hook) RoundTrip(r *http.Request) (*http.Response, error) {
	h.before(r)
	resp, err := h.base.RoundTrip(r)
	if h.after != nil {
		h.after(r)
	}
	return resp, err
}

// laneReport is the report job of one lane: lane base fails, any other passes.
func laneReport(name string) *report.Report {
	st := results.Pass
	if name == "base" {
		st = results.Fail
	}
	return &report.Report{Key: "default", Lanes: []results.Result{lane(name, st, head)}}
}

// converged checks what two reports of lanes base (failing) and extra (passing) must leave,
// whatever their order: one comment that shows both lanes as their statuses say, under a red
// headline that names both, and states that agree with the statuses.
func converged(t *testing.T, f *githubfake.Fake) {
	t.Helper()
	var ours []githubfake.Comment
	for _, c := range f.Comments(7) {
		if strings.HasPrefix(c.Body, report.Marker("default")+"\n") {
			ours = append(ours, c)
		}
	}
	if len(ours) != 1 {
		t.Fatalf("%d comments, want 1", len(ours))
	}
	body := ours[0].Body
	for _, want := range []string{"## ❌ diffusion-check: base failed · extra passed\n", "**base** ❌", "**extra** ✅"} {
		if !strings.Contains(body, want) {
			t.Errorf("comment lacks %q:\n%.600s", want, body)
		}
	}
	st := report.ParseState(body)
	if st == nil {
		t.Fatal("comment records no state")
	}
	var lanes []string
	for _, l := range st.Lanes {
		lanes = append(lanes, l.Name+" "+string(l.Status))
	}
	if diff := cmp.Diff([]string{"base fail", "extra pass"}, slices.Sorted(slices.Values(lanes))); diff != "" {
		t.Errorf("comment's lanes (-want +got):\n%s", diff)
	}
	last := map[string]string{}
	for _, s := range f.Statuses() {
		last[s.Context] = s.State
	}
	if diff := cmp.Diff(map[string]string{"diffusion-check/base": "failure", "diffusion-check/extra": "success"}, last); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}

// TestConcurrentPublishesConvergeWhenInterleaved: the interleaving that
// lost a lane, forced by gates: report base reads the statuses (only its own), then report
// extra publishes from start to end (its comment shows both lanes), and only then does base
// write its comment, rendered from what it read before extra existed. base's read after its
// write finds extra's status, and it writes again: the comment ends with both lanes.
func TestConcurrentPublishesConvergeWhenInterleaved(t *testing.T) {
	f := githubfake.NewT(t, githubfake.Config{Owner: "octo", Repo: "diffusion", Token: token})
	baseRead, extraDone := make(chan struct{}), make(chan struct{})
	var once, wrote sync.Once
	// baseRead closes once the fake has answered base's read of the statuses (not when it is
	// sent: extra's status could then land before the fake reads them).
	gate := hook{base: http.DefaultTransport, before: func(r *http.Request) {
		if (r.Method == http.MethodPost || r.Method == http.MethodPatch) && strings.Contains(r.URL.Path, "/comments") {
			wrote.Do(func() { <-extraDone })
		}
	}, after: func(r *http.Request) {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/status") {
			once.Do(func() { close(baseRead) })
		}
	}}
	var wg sync.WaitGroup
	var baseLog bytes.Buffer
	var baseErr, extraErr error
	wg.Add(2)
	go func() {
		defer wg.Done()
		_, baseErr = Publish(t.Context(), client(t, f, gate), laneReport("base"), nil, options(&fakeRun{}, &baseLog))
	}()
	go func() {
		defer wg.Done()
		defer close(extraDone)
		<-baseRead
		_, extraErr = Publish(t.Context(), client(t, f, nil), laneReport("extra"), nil, options(&fakeRun{}, &bytes.Buffer{}))
	}()
	wg.Wait()
	if baseErr != nil || extraErr != nil {
		t.Fatalf("publish: base %v, extra %v", baseErr, extraErr)
	}
	if !strings.Contains(baseLog.String(), "another lane's status changed while it was written: writing it again") {
		t.Errorf("base's log does not say it wrote again:\n%s", baseLog.String())
	}
	converged(t, f)
}

// TestPublishesOneAfterTheOther: base then extra, and extra then base: the last comment
// speaks for both lanes, red because base failed.
func TestPublishesOneAfterTheOther(t *testing.T) {
	for _, order := range [][]string{{"base", "extra"}, {"extra", "base"}} {
		t.Run(strings.Join(order, "-then-"), func(t *testing.T) {
			f := githubfake.NewT(t, githubfake.Config{Owner: "octo", Repo: "diffusion", Token: token})
			for _, name := range order {
				if _, err := Publish(t.Context(), client(t, f, nil), laneReport(name), nil, options(&fakeRun{}, &bytes.Buffer{})); err != nil {
					t.Fatalf("publish %s: %v", name, err)
				}
			}
			converged(t, f)
		})
	}
}

// TestPublishesAtOnce: the audit's trial, two reports started together, 10 times, without
// gates: every time the comment ends with both lanes.
func TestPublishesAtOnce(t *testing.T) {
	for attempt := range 10 {
		f := githubfake.NewT(t, githubfake.Config{Owner: "octo", Repo: "diffusion", Token: token})
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, name := range []string{"base", "extra"} {
			wg.Go(func() {
				_, errs[i] = Publish(t.Context(), client(t, f, nil), laneReport(name), nil, options(&fakeRun{}, &bytes.Buffer{}))
			})
		}
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			t.Fatalf("attempt %d: %v", attempt, errs)
		}
		converged(t, f)
	}
}
