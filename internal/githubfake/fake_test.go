package githubfake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestProblems: what a real client should never send is recorded as a problem (and NewT
// would fail the test with it).
func TestProblems(t *testing.T) {
	f := New(Config{Owner: "o", Repo: "r", Token: "tok"})
	defer f.Close()
	do := func(method, path, auth, body string) int {
		req, err := http.NewRequest(method, f.URL()+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", auth)
		req.Header.Set("Accept", "application/vnd.github.v3+json")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	sha := strings.Repeat("a", 40)
	tests := []struct {
		method, path, auth, body string
		code                     int
		problem                  string
	}{
		{"GET", "/repos/o/r/releases/1", "Bearer tok", "", 404, "unexpected request GET /repos/o/r/releases/1"},
		{"GET", "/repos/o/r/issues/1/comments", "Bearer wrong", "", 401, `Authorization "Bearer wrong"`},
		{"GET", "/repos/x/r/issues/1/comments", "Bearer tok", "", 404, "repository x/r, want o/r"},
		{"POST", "/repos/o/r/issues/1/comments", "Bearer tok", `{"body": "hi", "extra": 1}`, 422, `unknown field "extra"`},
		{"POST", "/api/v3/repos/o/r/statuses/" + sha, "Bearer tok", `{"state": "ok", "context": "c"}`, 422, `state "ok"`},
		{
			"POST",
			"/repos/o/r/statuses/" + sha,
			"Bearer tok",
			`{"state": "success", "context": "c", "description": "` + strings.Repeat("x", 141) + `"}`,
			422,
			"description of 141 characters",
		},
		{"POST", "/repos/o/r/statuses/main", "Bearer tok", `{"state": "success", "context": "c"}`, 422, `ref "main" is not a full commit SHA`},
	}
	for i, tt := range tests {
		if code := do(tt.method, tt.path, tt.auth, tt.body); code != tt.code {
			t.Errorf("%s %s: status %d, want %d", tt.method, tt.path, code, tt.code)
		}
		ps := f.Problems()
		if len(ps) != i+1 || !strings.Contains(ps[i], tt.problem) {
			t.Errorf("%s %s: problems %q, want the last to say %q", tt.method, tt.path, ps, tt.problem)
		}
	}
	// Requests that are fine leave no problem.
	if code := do("POST", "/repos/o/r/statuses/"+sha, "token tok", `{"state": "success", "context": "c"}`); code != 201 {
		t.Errorf("good status: %d", code)
	}
	if n := len(f.Problems()); n != len(tests) {
		t.Errorf("%d problems after a good request, want %d", n, len(tests))
	}
}

// TestOwnershipAndIdentity: GET /user refuses an installation token (403) and answers a
// personal token's actor; an edit or delete of a comment that the token did not write with a
// marker first line is a problem; a NewLocal fake answers through its Transport.
func TestOwnershipAndIdentity(t *testing.T) {
	f := NewLocal(Config{Owner: "o", Repo: "r", Token: "tok"})
	c := &http.Client{Transport: f.Transport()}
	do := func(method, path, body string) int {
		req, err := http.NewRequest(method, f.URL()+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer tok")
		req.Header.Set("Accept", "application/vnd.github.v3+json")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "test")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := do("GET", "/user", ""); code != 403 {
		t.Errorf("GET /user with an installation token: %d, want 403", code)
	}
	theirs := f.AddComment(1, "mallory", "<!-- diffusion-check:base -->\nfake")
	quoted := f.AddComment(1, ActionsBot.Login, "see\n<!-- diffusion-check:base -->")
	mine := f.AddComment(1, ActionsBot.Login, "<!-- diffusion-check:base -->\nreport")
	if code := do("PATCH", "/repos/o/r/issues/comments/"+itoa(mine), `{"body": "<!-- diffusion-check:base -->\nnew"}`); code != 200 {
		t.Errorf("edit of its own comment: %d", code)
	}
	if n := len(f.Problems()); n != 0 {
		t.Errorf("problems after a good edit: %v", f.Problems())
	}
	do("PATCH", "/repos/o/r/issues/comments/"+itoa(theirs), `{"body": "x"}`)
	do("DELETE", "/repos/o/r/issues/comments/"+itoa(quoted), "")
	if ps := f.Problems(); len(ps) != 2 || !strings.Contains(ps[0], "of mallory") || !strings.Contains(ps[1], "DELETE") {
		t.Errorf("problems %q, want the edit of mallory's comment and the delete of the quoting one", ps)
	}

	g := NewLocal(Config{Owner: "o", Repo: "r", Token: "tok", Actor: &User{Login: "octo-ci", ID: 9}})
	c.Transport = g.Transport()
	f = g
	if code := do("GET", "/user", ""); code != 200 {
		t.Errorf("GET /user with a personal token: %d, want 200", code)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestPageGoneAfterDelete: a page a Link header offered is no problem when a delete has since
// made it empty (as when two clients race: one pages while the other deletes); a page past
// the last that was never offered is one.
func TestPageGoneAfterDelete(t *testing.T) {
	f := New(Config{Owner: "o", Repo: "r", Token: "tok", PageSize: 2})
	defer f.Close()
	var ids []int64
	for i := range 3 {
		ids = append(ids, f.AddComment(1, "github-actions[bot]", fmt.Sprint("<!-- diffusion-check:k -->\ncomment ", i)))
	}
	do := func(method, path string) (int, string) { return call(t, f, method, path, "") }
	if code, _ := do("GET", "/repos/o/r/issues/1/comments?per_page=2"); code != 200 {
		t.Fatalf("page 1: status %d", code)
	}
	if code, _ := do("DELETE", fmt.Sprintf("/repos/o/r/issues/comments/%d", ids[0])); code != 204 {
		t.Fatalf("delete: status %d", code)
	}
	if code, body := do("GET", "/repos/o/r/issues/1/comments?per_page=2&page=2"); code != 200 || body != "[]" {
		t.Errorf("linked page 2 after the delete: %d %s, want 200 []", code, body)
	}
	if ps := f.Problems(); len(ps) != 0 {
		t.Errorf("problems %q after following a link, want none", ps)
	}
	do("GET", "/repos/o/r/issues/1/comments?per_page=2&page=3")
	if ps := f.Problems(); len(ps) != 1 || !strings.Contains(ps[0], "page 3 past the last page 1") {
		t.Errorf("problems %q, want page 3 (never linked) past the last", ps)
	}
}

// call sends an authorized request (with a JSON body unless body is "") to a fake through
// its Transport and returns the status and the body.
func call(t *testing.T, f *Fake, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, f.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("User-Agent", "test")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := (&http.Client{Transport: f.Transport()}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// TestPullsOfACommitAsGitHubAnswers: a commit that exists only in a fork lists nothing
// when asked of the base repository, and its pull request when asked of the fork (as
// TooTallNate/nx.js#410 verified against GitHub); a same-repository pull request is listed
// by the base; a repository the token cannot see is 404; the list of pull requests filters
// by OWNER:BRANCH, so a fork's "main" is not the base's "main".
func TestPullsOfACommitAsGitHubAnswers(t *testing.T) {
	fork, same := strings.Repeat("a", 40), strings.Repeat("b", 40)
	f := NewLocal(Config{Owner: "o", Repo: "r", Token: "tok"})
	f.AddPull(Pull{Number: 7, HeadSHA: fork, HeadRepo: "mallory/r", HeadRef: "main"})
	f.AddPull(Pull{Number: 8, HeadSHA: same, HeadRef: "main", BaseRef: "release"})
	f.AddPull(Pull{Number: 9, HeadSHA: fork, HeadRepo: "eve/r", HeadRef: "main"})
	f.HideRepo("eve/r")
	numbers := func(body string) string {
		var out []string
		for _, m := range regexp.MustCompile(`"number":(\d+)`).FindAllStringSubmatch(body, -1) {
			out = append(out, m[1])
		}
		return strings.Join(out, ",")
	}
	for _, tt := range []struct {
		path string
		code int
		want string
	}{
		{"/repos/o/r/commits/" + fork + "/pulls", 200, ""},
		{"/repos/mallory/r/commits/" + fork + "/pulls", 200, "7"},
		{"/repos/o/r/commits/" + same + "/pulls", 200, "8"},
		{"/repos/eve/r/commits/" + fork + "/pulls", 404, ""},
		{"/repos/nobody/r/commits/" + fork + "/pulls", 404, ""},
		{"/repos/o/r/pulls?head=mallory:main&state=open", 200, "7"},
		{"/repos/o/r/pulls?head=o:main", 200, "8"},
		{"/repos/o/r/pulls?head=eve:main&state=closed", 200, ""},
	} {
		code, body := call(t, f, "GET", tt.path, "")
		if code != tt.code || (code == 200 && numbers(body) != tt.want) {
			t.Errorf("GET %s: %d %s, want %d with pull requests [%s]", tt.path, code, body, tt.code, tt.want)
		}
	}
	if ps := f.Problems(); len(ps) != 0 {
		t.Errorf("problems %q", ps)
	}
	call(t, f, "GET", "/repos/o/r/pulls?head=main", "")
	if ps := f.Problems(); len(ps) != 1 || !strings.Contains(ps[0], `head "main", want OWNER:BRANCH`) {
		t.Errorf("problems %q, want the head filter without an owner", ps)
	}
}

// TestViewerForEveryTokenKind: GraphQL's viewer names the token's account for every kind, as
// GitHub does (a personal token's user, the workflow's GITHUB_TOKEN github-actions[bot], an
// App's installation token its bot), while GET /user refuses the installation tokens; any
// other query, and GraphQL under GHES's /api/v3, is a problem.
func TestViewerForEveryTokenKind(t *testing.T) {
	const query = `{"query": "query { viewer { login } }"}`
	for _, tt := range []struct {
		actor *User
		login string
		user  int
	}{
		{&User{Login: "octo-ci", ID: 9}, "octo-ci", 200},
		{nil, "github-actions[bot]", 403},
		{&User{Login: "diffusion-bot[bot]", ID: 77}, "diffusion-bot[bot]", 403},
	} {
		f := NewLocal(Config{Owner: "o", Repo: "r", Token: "tok", Actor: tt.actor})
		if code, _ := call(t, f, "GET", "/user", ""); code != tt.user {
			t.Errorf("%s: GET /user %d, want %d", tt.login, code, tt.user)
		}
		for _, path := range []string{"/graphql", "/api/graphql"} {
			if code, body := call(t, f, "POST", path, query); code != 200 || body != `{"data":{"viewer":{"login":"`+tt.login+`"}}}` {
				t.Errorf("%s: POST %s: %d %s", tt.login, path, code, body)
			}
		}
		if ps := f.Problems(); len(ps) != 0 {
			t.Errorf("%s: problems %q", tt.login, ps)
		}
	}
	f := NewLocal(Config{Owner: "o", Repo: "r", Token: "tok"})
	call(t, f, "POST", "/graphql", `{"query": "query { viewer { email } }"}`)
	call(t, f, "POST", "/api/v3/graphql", query)
	if ps := f.Problems(); len(ps) != 2 || !strings.Contains(ps[0], "the fake answers only") ||
		!strings.Contains(ps[1], "GHES serves GraphQL at /api/graphql") {
		t.Errorf("problems %q, want the other query and the GHES path", ps)
	}
}

// recordingTB is a testing.TB whose errors and clean-ups are kept, to test what NewT reports.
type recordingTB struct {
	testing.TB
	errs     []string
	cleanups []func()
}

func (r *recordingTB) Helper()           {}
func (r *recordingTB) Cleanup(f func())  { r.cleanups = append(r.cleanups, f) }
func (r *recordingTB) Error(args ...any) { r.errs = append(r.errs, fmt.Sprint(args...)) }
func (r *recordingTB) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestUnusedFaultFailsTheTest: a fault that no request matched fails the test of a NewT fake
// (as httpmock's Verify fails for a stub never called); a used one, even with uses left, does
// not.
func TestUnusedFaultFailsTheTest(t *testing.T) {
	rec := &recordingTB{TB: t}
	f := NewT(rec, Config{Owner: "o", Repo: "r", Token: "tok"})
	f.Inject(Fault{Method: "GET", Path: "/repos/o/r/issues/1/comments", Code: 502, Times: 5},
		Fault{Method: "POST", Path: "/repos/o/r/statuses/", Code: 500})
	resp := apiGet(t, f, "/repos/o/r/issues/1/comments")
	resp.Body.Close()
	if resp.StatusCode != 502 {
		t.Fatalf("status %d, want the injected 502", resp.StatusCode)
	}
	for _, c := range rec.cleanups {
		c()
	}
	want := []string{"fake GitHub: the fault POST /repos/o/r/statuses/ → 500 was never used: no request matched it"}
	if diff := cmp.Diff(want, rec.errs); diff != "" {
		t.Errorf("NewT's errors (-want +got):\n%s", diff)
	}
}

// GET /repos/{o}/{r}/pulls/{n} answers the pull request with its head as it is now (a push
// moves it), and 404 for a number that is none, as GitHub does.
func TestPullHead(t *testing.T) {
	f := NewT(t, Config{Owner: "o", Repo: "r", Token: "tok"})
	sha, newer := strings.Repeat("a", 40), strings.Repeat("b", 40)
	f.AddPull(Pull{Number: 7, HeadSHA: sha})
	get := func(n string) (int, string) {
		resp := apiGet(t, f, "/repos/o/r/pulls/"+n)
		defer resp.Body.Close()
		var pr struct {
			Head struct {
				SHA string `json:"sha"`
			} `json:"head"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&pr)
		return resp.StatusCode, pr.Head.SHA
	}
	if code, head := get("7"); code != 200 || head != sha {
		t.Errorf("#7: %d %s", code, head)
	}
	f.Push(7, newer)
	if code, head := get("7"); code != 200 || head != newer {
		t.Errorf("#7 after a push: %d %s", code, head)
	}
	if code, _ := get("8"); code != 404 || len(f.Problems()) != 0 {
		t.Errorf("#8: %d, problems %v", code, f.Problems())
	}
}

// apiGet is a GET of path as a client of the fake's repository sends it (token "tok").
func apiGet(t *testing.T, f *Fake, path string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.URL()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Accept", "application/vnd.github.v3+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
