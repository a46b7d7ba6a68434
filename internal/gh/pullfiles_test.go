package gh

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/internal/githubfake"
)

func TestPullFiles(t *testing.T) {
	many := func(n int) []githubfake.PullFile {
		var fs []githubfake.PullFile
		for i := range n {
			fs = append(fs, githubfake.PullFile{Filename: fmt.Sprintf("src/f%04d.py", i)})
		}
		return fs
	}
	for _, tc := range []struct {
		name         string
		files        []githubfake.PullFile
		wantN        int
		wantComplete bool
		wantRequests int
		first        []string
	}{
		{"one page, a rename counts under both names", []githubfake.PullFile{
			{Filename: "a.py"}, {Filename: "new/b.py", PreviousFilename: "old/b.py", Status: "renamed"}, {Filename: "c.py", Status: "removed"},
		}, 4, true, 1, []string{"a.py", "new/b.py", "old/b.py", "c.py"}},
		{"no files", []githubfake.PullFile{}, 0, true, 1, nil},
		{"pages of 100", many(250), 250, true, 3, []string{"src/f0000.py"}},
		{"2,999 files are all of them", many(2999), 2999, true, 30, []string{"src/f0000.py"}},
		{"3,000 files may be cut", many(3000), 3000, false, 30, []string{"src/f0000.py"}},
		{"GitHub lists no more than 3,000", many(3500), 3000, false, 30, []string{"src/f0000.py"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, p, _ := setup(t, githubfake.Config{})
			f.SetPullFiles(7, tc.files)
			paths, complete, err := p.PullFiles(t.Context(), 7)
			if err != nil {
				t.Fatal(err)
			}
			if len(paths) != tc.wantN || complete != tc.wantComplete {
				t.Errorf("%d paths, complete %v; want %d, %v", len(paths), complete, tc.wantN, tc.wantComplete)
			}
			if got := len(f.Requests()); got != tc.wantRequests {
				t.Errorf("%d requests, want %d: %v", got, tc.wantRequests, f.Requests())
			}
			if n := len(tc.first); n > 0 {
				if diff := cmp.Diff(tc.first, paths[:n]); diff != "" {
					t.Errorf("paths (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestPullFilesRetriesAndFails(t *testing.T) {
	f, p, _ := setup(t, githubfake.Config{})
	f.SetPullFiles(7, []githubfake.PullFile{{Filename: "a.py"}})
	f.Inject(githubfake.Fault{Method: http.MethodGet, Path: "/repos/octo/diffusion/pulls/7/files", Code: http.StatusBadGateway})
	paths, complete, err := p.PullFiles(t.Context(), 7)
	if err != nil || !complete || len(paths) != 1 {
		t.Fatalf("after a 502: %v %v %v, want the one file", paths, complete, err)
	}
	if _, _, err := p.PullFiles(t.Context(), 8); err == nil {
		t.Fatal("a pull request that does not exist: no error")
	}
}
