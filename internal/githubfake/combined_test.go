package githubfake

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCombinedStatusIsTheLatestOfEachContext: as GitHub's combined status, the most recent
// status of each context of the commit, newest first, with total_count and the combined
// state, paginated with a Link header.
func TestCombinedStatusIsTheLatestOfEachContext(t *testing.T) {
	f := NewT(t, Config{Owner: "o", Repo: "r", Token: "tok"})
	sha, other := strings.Repeat("a", 40), strings.Repeat("b", 40)
	f.statuses = []Status{
		{SHA: sha, Context: "ci/base", State: "pending"},
		{SHA: sha, Context: "ci/extra", State: "success"},
		{SHA: other, Context: "ci/base", State: "error"},
		{SHA: sha, Context: "ci/base", State: "failure"},
	}
	get := func(query string) (map[string]any, http.Header) {
		req, _ := http.NewRequest(http.MethodGet, f.URL()+"/repos/o/r/commits/"+sha+"/status"+query, nil)
		req.Header.Set("Authorization", "Bearer tok")
		req.Header.Set("Accept", "application/vnd.github+json")
		req.Header.Set("User-Agent", "test")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		return body, resp.Header
	}
	body, _ := get("")
	var got []string
	for _, s := range body["statuses"].([]any) {
		m := s.(map[string]any)
		got = append(got, m["context"].(string)+" "+m["state"].(string))
	}
	if diff := cmp.Diff([]string{"ci/base failure", "ci/extra success"}, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if body["state"] != "failure" || body["total_count"] != float64(2) {
		t.Errorf("state %v, total_count %v; want failure, 2", body["state"], body["total_count"])
	}
	page, h := get("?per_page=1")
	if n := len(page["statuses"].([]any)); n != 1 || !strings.Contains(h.Get("Link"), `rel="next"`) {
		t.Errorf("per_page=1: %d statuses, Link %q; want 1 and a next page", n, h.Get("Link"))
	}
}
