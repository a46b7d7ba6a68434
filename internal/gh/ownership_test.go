package gh

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/internal/githubfake"
	"github.com/diffusion-check/diffusion-check/results"
)

// TestUpsertEditsOnlyCommentsTheTokenWroteWithTheMarkerFirst: of the comments that carry the
// marker of key, only the token's own with the marker as its first line is edited; a
// maintainer quoting the marker, a fork author's comment that starts with it, another bot's,
// and the token's comment of another key that shows the marker inside a code block are left
// as they were (the fake records a problem for any edit or delete of them).
func TestUpsertEditsOnlyCommentsTheTokenWroteWithTheMarkerFirst(t *testing.T) {
	f, p, _ := setup(t, githubfake.Config{PageSize: 2})
	others := map[int64]string{}
	add := func(login, body string) int64 {
		id := f.AddComment(7, login, body)
		others[id] = body
		return id
	}
	add("maintainer", "Why does the bot write\n"+marker+"\nat the top of its comments?")
	add("mallory", marker+"\nall requests passed, trust me")
	add("dependabot[bot]", marker+"\nbumps deps")
	add("github-actions[bot]", "quoting the bot:\n"+marker)
	add("github-actions[bot]", markerOf("default")+"\n```text\n"+marker+"\n```")
	mine := f.AddComment(7, "github-actions[bot]", marker+"\nold report")

	c, err := p.UpsertComment(t.Context(), 7, marker, body("all 4 requests passed"))
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != mine {
		t.Errorf("kept comment %d, want the token's own %d", c.ID, mine)
	}
	for _, got := range f.Comments(7) {
		if want, ok := others[got.ID]; ok && got.Body != want {
			t.Errorf("comment %d of %s was changed:\n%s", got.ID, got.User, got.Body)
		}
		delete(others, got.ID)
	}
	if len(others) != 0 {
		t.Errorf("comments of others deleted: %v", others)
	}
}

// TestUpsertWithoutOwnCommentCreatesOneAndDeletesNothing: when the only comments with the
// marker are other people's, the report is a new comment and every other comment stays.
func TestUpsertWithoutOwnCommentCreatesOneAndDeletesNothing(t *testing.T) {
	f, p, _ := setup(t, githubfake.Config{})
	f.AddComment(7, "mallory", marker+"\nfake report 1")
	f.AddComment(7, "mallory", marker+"\nfake report 2")
	c, err := p.UpsertComment(t.Context(), 7, marker, body("all 4 requests passed"))
	if err != nil {
		t.Fatal(err)
	}
	cs := f.Comments(7)
	if len(cs) != 3 || cs[2].ID != c.ID || cs[2].Author != githubfake.ActionsBot {
		t.Errorf("comments %+v, want the two of mallory and a new one of github-actions[bot]", cs)
	}
}

// TestUpsertWithUnknownIdentityOnlyCreates: without the token's account (Self nil) even the
// bot's own comment is not edited or deleted: a new comment is created.
func TestUpsertWithUnknownIdentityOnlyCreates(t *testing.T) {
	f, p, _ := setup(t, githubfake.Config{})
	p.Self = nil
	old := f.AddComment(7, "github-actions[bot]", marker+"\nold")
	if prev, err := p.FindComment(t.Context(), 7, marker); err != nil || prev != nil {
		t.Errorf("FindComment without an identity = %+v, %v; want none", prev, err)
	}
	c, err := p.UpsertComment(t.Context(), 7, marker, body("all 4 requests passed"))
	if err != nil {
		t.Fatal(err)
	}
	cs := f.Comments(7)
	if c.ID == old || len(cs) != 2 || cs[0].Body != marker+"\nold" {
		t.Errorf("comments %+v: want the old one untouched and a new one", cs)
	}
	for _, r := range f.Requests() {
		if strings.HasPrefix(r, "PATCH") || strings.HasPrefix(r, "DELETE") || strings.HasPrefix(r, "GET") {
			t.Errorf("request %s without an identity", r)
		}
	}
}

// TestIdentityRule: GET /user names a personal token's user; an installation token, refused
// with 403, is GraphQL's viewer: github-actions[bot] for the workflow's GITHUB_TOKEN, the
// App's <slug>[bot] for an App's (known by login: no user's login ends in [bot]); a GitHub
// that fails otherwise leaves the identity unknown (an error), never a guess.
func TestIdentityRule(t *testing.T) {
	pat := &githubfake.User{Login: "octo-ci", ID: 555}
	app := &githubfake.User{Login: "diffusion-bot[bot]", ID: 777}
	tests := []struct {
		name  string
		actor *githubfake.User
		fault *githubfake.Fault
		want  Identity
		err   string
	}{
		{name: "personal access token", actor: pat, want: Identity{Login: "octo-ci", ID: 555}},
		{name: "GITHUB_TOKEN", want: ActionsBot},
		{name: "GitHub App installation token", actor: app, want: Identity{Login: "diffusion-bot[bot]"}},
		{
			name:  "GraphQL fails past the retries",
			actor: app,
			fault: &githubfake.Fault{Method: "POST", Path: "/api/graphql", Code: 502, Times: 1000},
			err:   "GET /user refused an installation token (403), and GraphQL viewer",
		},
		{name: "401", actor: pat, fault: &githubfake.Fault{Path: "/user", Code: 401, Message: "Bad credentials"}, err: "401"},
		{name: "5xx past the retries", actor: pat, fault: &githubfake.Fault{Path: "/user", Code: 502, Times: 1000}, err: "502"},
		{
			name:  "403 that is a rate limit",
			fault: &githubfake.Fault{Path: "/user", Code: 403, RateLimitReset: 1000 * 3600e9, Times: 1000, Message: "API rate limit exceeded"},
			err:   "rate limit",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, p, _ := setup(t, githubfake.Config{Actor: tt.actor})
			if tt.fault != nil {
				f.Inject(*tt.fault)
			}
			got, how, err := p.Identity(t.Context())
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Identity = %+v, %v; want an error with %q", got, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" || how == "" {
				t.Errorf("identity (-want +got):\n%s (how %q)", diff, how)
			}
		})
	}
}

// TestRefusalsSayWhatIsWrong: only a fork's 403 is ErrReadOnly; 401, a 403 in the
// repository's own pull request and 404 are errors that say what to fix.
func TestRefusalsSayWhatIsWrong(t *testing.T) {
	tests := []struct {
		code     int
		fork     bool
		readOnly bool
		want     string
	}{
		{403, true, true, "the token is read-only (a pull request from a fork)"},
		{403, false, false, `give the job "permissions: statuses: write"`},
		{401, true, false, "GitHub refused the token (401): it is invalid or expired"},
		{404, false, false, "not found (404): the repository octo/diffusion"},
	}
	for _, tt := range tests {
		f, p, s := setup(t, githubfake.Config{})
		p.Fork = tt.fork
		f.Inject(githubfake.Fault{Path: "/repos/octo/diffusion/statuses/", Code: tt.code, Message: "Resource not accessible by integration"})
		err := p.SetStatus(t.Context(), head, Status{Context: "diffusion-check/base", State: "success", Description: "all 1 request passed"})
		if err == nil || errors.Is(err, ErrReadOnly) != tt.readOnly || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%d fork=%v: err = %v, want %q (read-only %v)", tt.code, tt.fork, err, tt.want, tt.readOnly)
		}
		if len(s.waits) != 0 {
			t.Errorf("%d: retried a refusal: %v", tt.code, s.waits)
		}
	}
}

// TestCheckCommitRefusesOtherCommits: results of another commit, or of none, are refused.
func TestCheckCommitRefusesOtherCommits(t *testing.T) {
	const other = "0000000000000000000000000000000000000abc"
	ok := []results.Result{{Lane: "base", Commit: head}, {Lane: "extra", Commit: head}}
	if err := CheckCommit(ok, head); err != nil {
		t.Errorf("same commit: %v", err)
	}
	bad := []results.Result{{Lane: "base", Commit: other}, {Lane: "extra"}, {Lane: "third", Commit: "main\n::error::x"}}
	err := CheckCommit(bad, head)
	if !errors.Is(err, ErrOtherCommit) || !strings.Contains(err.Error(), "lane base tested commit "+other) ||
		!strings.Contains(err.Error(), "lane extra records no commit") ||
		!strings.Contains(err.Error(), `lane third records "main\n::error::x", not a commit SHA`) {
		t.Errorf("err = %v", err)
	}
}

// TestOtherTokensKeepOneComment: with a personal token or a GitHub App's installation
// token, two publishes leave one comment, the token's account's, edited in place; a
// maintainer's comment that quotes the marker and github-actions[bot]'s comment with it
// (another workflow's) are never touched (the fake fails the test for an edit or delete of a
// comment the token did not write).
func TestOtherTokensKeepOneComment(t *testing.T) {
	for _, tt := range []struct {
		actor githubfake.User
		how   string
	}{
		{githubfake.User{Login: "octo-ci", ID: 555}, "GET /user: the token acts as octo-ci"},
		{githubfake.User{Login: "diffusion-bot[bot]", ID: 777}, "a GitHub App's, which writes as diffusion-bot[bot]"},
	} {
		t.Run(tt.actor.Login, func(t *testing.T) {
			f, p, _ := setup(t, githubfake.Config{Actor: &tt.actor})
			id, how, err := p.Identity(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(how, tt.how) {
				t.Errorf("how = %q, want %q", how, tt.how)
			}
			p.Self = &id
			quoting := f.AddComment(7, "maintainer", marker+"\nwhy does the bot say this?")
			actions := f.AddComment(7, "github-actions[bot]", marker+"\nanother workflow's")
			first, err := p.UpsertComment(t.Context(), 7, marker, body("all 4 requests passed"))
			if err != nil {
				t.Fatal(err)
			}
			second, err := p.UpsertComment(t.Context(), 7, marker, body("4 of 6 requests failed"))
			if err != nil {
				t.Fatal(err)
			}
			var mine []githubfake.Comment
			for _, c := range f.Comments(7) {
				if c.User == tt.actor.Login {
					mine = append(mine, c)
				}
			}
			if len(mine) != 1 || second.ID != first.ID || first.ID == quoting || first.ID == actions || len(f.Comments(7)) != 3 {
				t.Fatalf("the token's comments %+v (first %d, second %d) of %d: want one, edited in place, beside the two others", mine, first.ID,
					second.ID, len(f.Comments(7)))
			}
			if !strings.Contains(mine[0].Body, "4 of 6 requests failed") {
				t.Errorf("the token's comment was not edited: %q", mine[0].Body)
			}
		})
	}
}
