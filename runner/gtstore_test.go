package runner

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/internal/gitstore"
	"github.com/diffusion-check/diffusion-check/suite"
)

// TestFetchStoreRefusals: a gt run and a run without a cache folder are refused as
// configuration, naming the suite; a partition that compares nothing with ground truth
// (consistency off, or SGLANG_SKIP_CONSISTENCY=1) fetches nothing, so a store that is not
// there does not stop it.
func TestFetchStoreRefusals(t *testing.T) {
	off := false
	compares := []*suite.Case{{ID: "a", Modality: suite.Image}}
	quiet := []*suite.Case{{ID: "a", Modality: suite.Image, Checks: suite.Toggles{Consistency: &off}}}
	st := &gitstore.Store{Repo: "/nowhere/store.git", Commit: strings.Repeat("a", 40), Path: "gt"}
	s := &suite.Suite{Path: "/ci/suite.yaml", GroundTruthStore: st}
	for _, tc := range []struct {
		name  string
		opts  Options
		cases []*suite.Case
		want  string // "": no error, nothing fetched
	}{
		{"gt run", Options{Suite: s, Mode: ModeGT, GTCache: t.TempDir()}, compares, "/ci/suite.yaml: ground_truth is a git store pinned at a commit"},
		{"no cache", Options{Suite: s}, compares, "/ci/suite.yaml: ground_truth: no cache folder to fetch /nowhere/store.git@" + st.Commit + ":gt into"},
		{"no comparison", Options{Suite: s, GTCache: t.TempDir()}, quiet, ""},
		{"SGLANG_SKIP_CONSISTENCY", Options{Suite: s, GTCache: t.TempDir(), SkipConsistency: true}, compares, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cc := &consistencyConfig{}
			err := cc.fetchStore(context.Background(), tc.opts, tc.cases)
			var ce *ConfigError
			switch {
			case tc.want == "" && (err != nil || cc.gt.Dir != "" || cc.store != nil):
				t.Errorf("err %v, ground truth %q: want nothing fetched", err, cc.gt.Dir)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &ce)):
				t.Errorf("err %v, want a ConfigError saying %q", err, tc.want)
			}
		})
	}
}
