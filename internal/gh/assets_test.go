package gh

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/internal/githubfake"
)

var pushTime = time.Date(2026, 12, 1, 17, 0, 0, 0, time.UTC)

func png(s string) []byte { return []byte("\x89PNG\r\n\x1a\n" + s) }

// folders lists the run folders of the branch's tip.
func folders(t *testing.T, f *githubfake.Fake, branch string) []string {
	t.Helper()
	files, _, ok := f.BranchFiles(branch)
	if !ok {
		t.Fatalf("no branch %s", branch)
	}
	set := map[string]bool{}
	for p := range files {
		if d, ok := runFolder(p); ok {
			set[d] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// TestPushAssetsCreatesTheBranchWithTheRunsFolder: the first push creates the branch as an
// orphan holding a README and the run's folder, byte for byte, and the URL is the
// repository's raw view of the file on the branch.
func TestPushAssetsCreatesTheBranchWithTheRunsFolder(t *testing.T) {
	f, p, _ := setup(t, githubfake.Config{})
	folder := RunFolder(pushTime, "4242", "1")
	paths, err := p.PushAssets(t.Context(), DefaultAssetsBranch, folder,
		[]Asset{{"base/t2i/request-2.png", png("a")}, {"base/t2i/request-3.png", png("b")}}, DefaultRetention, pushTime)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"runs/20261201T170000Z-4242-1/base/t2i/request-2.png", "runs/20261201T170000Z-4242-1/base/t2i/request-3.png"}
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
	files, _, _ := f.BranchFiles(DefaultAssetsBranch)
	if string(files[want[0]]) != string(png("a")) || string(files[want[1]]) != string(png("b")) ||
		!strings.Contains(string(files["README.md"]), "last 50 runs") ||
		len(files) != 3 {
		t.Errorf("branch files: %v", slices.Sorted(maps.Keys(files)))
	}
	if ps := f.BranchParents(DefaultAssetsBranch); len(ps) != 0 {
		t.Errorf("the first commit has parents %v, want an orphan", ps)
	}
	if u := p.AssetURL("https://github.com", DefaultAssetsBranch, paths[0]); u != "https://github.com/octo/diffusion/raw/diffusion-check-assets/"+want[0] {
		t.Errorf("URL %s", u)
	}
}

// TestPushAssetsKeepsTheLastRunsAndRewritesAsOrphan: with Runs 3, pushes keep the newest 3
// folders, drop folders older than MaxAge, fast-forward between rewrites, and every third
// push makes a new orphan commit holding only what is kept.
func TestPushAssetsKeepsTheLastRunsAndRewritesAsOrphan(t *testing.T) {
	f, p, _ := setup(t, githubfake.Config{})
	keep := Retention{Runs: 3, MaxAge: 48 * time.Hour}
	var pushed []string
	for i := range 5 {
		at := pushTime.Add(time.Duration(i) * time.Hour)
		folder := RunFolder(at, fmt.Sprint(100+i), "1")
		pushed = append(pushed, folder)
		if _, err := p.PushAssets(t.Context(), DefaultAssetsBranch, folder, []Asset{{"base/c/request-1.png", png(folder)}}, keep, at); err != nil {
			t.Fatal(err)
		}
		parents := f.BranchParents(DefaultAssetsBranch)
		// Generations 0 (create), 1, 2, then 0 (orphan), 1.
		if orphan := i == 0 || i == 3; orphan != (len(parents) == 0) {
			t.Errorf("push %d: parents %v, want orphan %v", i, parents, orphan)
		}
	}
	if diff := cmp.Diff(pushed[2:], folders(t, f, DefaultAssetsBranch)); diff != "" {
		t.Errorf("kept folders (-want +got):\n%s", diff)
	}
	// Three days later, a push drops what is older than two days.
	late := pushTime.Add(72 * time.Hour)
	folder := RunFolder(late, "200", "1")
	if _, err := p.PushAssets(t.Context(), DefaultAssetsBranch, folder, []Asset{{"x.png", png("x")}}, keep, late); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{folder}, folders(t, f, DefaultAssetsBranch)); diff != "" {
		t.Errorf("after the age limit (-want +got):\n%s", diff)
	}
}

// TestPushAssetsRetriesWhenAnotherPushLandsFirst: another run pushes between this push's
// read of the tip and its ref update; the update is refused as not a fast-forward, the push
// reads the tip again and lands on top, and both runs' folders are on the branch.
func TestPushAssetsRetriesWhenAnotherPushLandsFirst(t *testing.T) {
	var once sync.Once
	var other *Client
	otherFolder := RunFolder(pushTime, "1", "1")
	var f *githubfake.Fake
	f, p, _ := setup(t, githubfake.Config{}, func(rt *RetryTransport) {
		rt.Base = roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodPatch && strings.Contains(r.URL.Path, "/git/refs/") {
				once.Do(func() {
					if _, err := other.PushAssets(r.Context(), DefaultAssetsBranch, otherFolder, []Asset{{"o.png", png("other")}}, DefaultRetention, pushTime); err != nil {
						t.Errorf("the other run's push: %v", err)
					}
				})
			}
			return http.DefaultTransport.RoundTrip(r)
		})
	})
	other, err := New(Env{APIURL: f.URL() + "/api/v3", Token: token, Repository: "octo/diffusion"}, &RetryTransport{})
	if err != nil {
		t.Fatal(err)
	}
	// The branch exists, so that this push's ref write is an update.
	if _, err := other.PushAssets(t.Context(), DefaultAssetsBranch, RunFolder(pushTime.Add(-time.Hour), "0", "1"), []Asset{{"z.png", png("zero")}},
		DefaultRetention, pushTime); err != nil {
		t.Fatal(err)
	}
	mine := RunFolder(pushTime.Add(time.Minute), "2", "1")
	if _, err := p.PushAssets(t.Context(), DefaultAssetsBranch, mine, []Asset{{"m.png", png("mine")}}, DefaultRetention, pushTime); err != nil {
		t.Fatal(err)
	}
	want := []string{RunFolder(pushTime.Add(-time.Hour), "0", "1"), otherFolder, mine}
	if diff := cmp.Diff(want, folders(t, f, DefaultAssetsBranch)); diff != "" {
		t.Errorf("folders (-want +got):\n%s", diff)
	}
	var refused int
	for _, r := range f.Requests() {
		if strings.HasPrefix(r, "PATCH /repos/octo/diffusion/git/refs/") {
			refused++
		}
	}
	if refused != 3 { // the other's, this one's refused, this one's again
		t.Errorf("%d ref updates, want 3: %v", refused, f.Requests())
	}
}

// TestPushAssetsConcurrentFirstPushes: runs that push at once to a repository without the
// branch all land: the ones whose create loses read the new branch and fast-forward it.
func TestPushAssetsConcurrentFirstPushes(t *testing.T) {
	f, p, _ := setup(t, githubfake.Config{})
	var wg sync.WaitGroup
	errs := make([]error, 4)
	var want []string
	for i := range 4 {
		folder := RunFolder(pushTime.Add(time.Duration(i)*time.Second), fmt.Sprint(i), "1")
		want = append(want, folder)
		wg.Go(func() {
			_, errs[i] = p.PushAssets(t.Context(), DefaultAssetsBranch, folder, []Asset{{"p.png", png(folder)}}, DefaultRetention, pushTime)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, folders(t, f, DefaultAssetsBranch)); diff != "" {
		t.Errorf("folders (-want +got):\n%s", diff)
	}
}

// TestPushAssetsRefusedIsForbiddenOrReadOnly: without contents: write the push is
// ErrForbidden naming the permission; a fork's token is ErrReadOnly; nothing is written.
func TestPushAssetsRefusedIsForbiddenOrReadOnly(t *testing.T) {
	folder := RunFolder(pushTime, "1", "1")
	f, p, _ := setup(t, githubfake.Config{NoContents: true})
	_, err := p.PushAssets(t.Context(), DefaultAssetsBranch, folder, []Asset{{"a.png", png("a")}}, DefaultRetention, pushTime)
	if !errors.Is(err, ErrForbidden) || !strings.Contains(err.Error(), `"permissions: contents: write"`) {
		t.Errorf("without contents: write: err = %v", err)
	}
	if _, _, ok := f.BranchFiles(DefaultAssetsBranch); ok {
		t.Error("a branch was made")
	}
	_, p, _ = setup(t, githubfake.Config{ReadOnly: true})
	p.Fork = true
	if _, err := p.PushAssets(t.Context(), DefaultAssetsBranch, folder, []Asset{{"a.png", png("a")}}, DefaultRetention, pushTime); !errors.Is(err,
		ErrReadOnly) {
		t.Errorf("fork: err = %v, want ErrReadOnly", err)
	}
	for _, bad := range []string{"../x.png", "/abs.png", "a/../../b.png", ""} {
		if _, err := p.PushAssets(t.Context(), DefaultAssetsBranch, folder, []Asset{{bad, png("a")}}, DefaultRetention, pushTime); err == nil ||
			errors.Is(err, ErrReadOnly) {
			t.Errorf("file name %q: err = %v, want a refusal before any write", bad, err)
		}
	}
}
