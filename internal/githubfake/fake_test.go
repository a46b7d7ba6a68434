package githubfake

import (
	"net/http"
	"strings"
	"testing"
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
		{"GET", "/repos/o/r/pulls/1", "Bearer tok", "", 404, "unexpected request GET /repos/o/r/pulls/1"},
		{"GET", "/repos/o/r/issues/1/comments", "Bearer wrong", "", 401, `Authorization "Bearer wrong"`},
		{"GET", "/repos/x/r/issues/1/comments", "Bearer tok", "", 404, "repository x/r, want o/r"},
		{"POST", "/repos/o/r/issues/1/comments", "Bearer tok", `{"body": "hi", "extra": 1}`, 422, `unknown field "extra"`},
		{"POST", "/api/v3/repos/o/r/statuses/" + sha, "Bearer tok", `{"state": "ok", "context": "c"}`, 422, `state "ok"`},
		{"POST", "/repos/o/r/statuses/" + sha, "Bearer tok", `{"state": "success", "context": "c", "description": "` + strings.Repeat("x", 141) + `"}`, 422, "description of 141 characters"},
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
