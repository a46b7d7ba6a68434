package gh

import (
	"net/http"
	"sync"
	"testing"

	"github.com/diffusion-check/diffusion-check/internal/githubfake"
)

// otherRun is a run racing the one under test: through the transport it wraps, it deletes
// the comment with id (set once the comments exist) the first time at says so, before the
// request is sent (before) or once it is answered.
type otherRun struct {
	t      *testing.T
	p      *Client
	id     int64
	at     func(r *http.Request) bool
	before bool
	once   sync.Once
}

func (o *otherRun) transport(rt *RetryTransport) {
	rt.Base = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if o.before && o.at(r) {
			o.delete(r)
		}
		resp, err := http.DefaultTransport.RoundTrip(r)
		if !o.before && err == nil && o.at(r) {
			o.delete(r)
		}
		return resp, err
	})
}

func (o *otherRun) delete(r *http.Request) {
	o.once.Do(func() {
		if _, err := o.p.API.Issues.DeleteComment(r.Context(), "octo", "diffusion", o.id); err != nil {
			o.t.Errorf("the other run's delete of comment %d: %v", o.id, err)
		}
	})
}

// roundTripFunc adapts a function to http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestUpsertFindsCommentMovedUpByConcurrentDelete replays, step by step, the interleaving that
// left two comments when three `report --publish` ran at once on a loaded machine: three
// comments of the key (raced runs made them) sit after four others, three a page; right after
// this run reads page 2, another run deletes the second of ours, so the third moves up from
// page 3 to page 2 and this run's look misses it. It must look again and delete that one too.
func TestUpsertFindsCommentMovedUpByConcurrentDelete(t *testing.T) {
	other := &otherRun{t: t, at: func(r *http.Request) bool { return r.Method == http.MethodGet && r.URL.Query().Get("page") == "2" }}
	f, p, _ := setup(t, githubfake.Config{PageSize: 3}, other.transport)
	other.p = p
	for range 4 {
		f.AddComment(9, "reviewer", "looks good")
	}
	text := body("all 4 requests passed")
	var ids []int64
	for range 3 {
		ids = append(ids, f.AddComment(9, "github-actions[bot]", text))
	}
	other.id = ids[1]
	posted, err := p.UpsertComment(t.Context(), 9, marker, text)
	if err != nil {
		t.Fatal(err)
	}
	got := ours(f.Comments(9))
	if len(got) != 1 || got[0].ID != ids[0] || posted.ID != ids[0] {
		var left []int64
		for _, c := range got {
			left = append(left, c.ID)
		}
		t.Errorf("comments of the key left %v, kept %d; want only the oldest, %d", left, posted.ID, ids[0])
	}
}

// TestUpsertEditsTheSurvivorWhenItsCommentIsDeleted: the oldest comment of the key is deleted
// by another run (one that saw an even older one) between this run's look and its edit; the
// edit's 404 makes it look again and edit the comment that is left, instead of failing or
// taking the 404 for a read-only token.
func TestUpsertEditsTheSurvivorWhenItsCommentIsDeleted(t *testing.T) {
	other := &otherRun{t: t, before: true, at: func(r *http.Request) bool { return r.Method == http.MethodPatch }}
	f, p, _ := setup(t, githubfake.Config{}, other.transport)
	other.p = p
	var ids []int64
	for range 2 {
		ids = append(ids, f.AddComment(9, "github-actions[bot]", body("run #77")))
	}
	other.id = ids[0]
	text := body("run #78")
	posted, err := p.UpsertComment(t.Context(), 9, marker, text)
	if err != nil {
		t.Fatal(err)
	}
	got := ours(f.Comments(9))
	if len(got) != 1 || got[0].ID != ids[1] || got[0].Body != text || posted.ID != ids[1] {
		t.Errorf("comments of the key %+v, kept %d; want only %d, with the new body", got, posted.ID, ids[1])
	}
}
