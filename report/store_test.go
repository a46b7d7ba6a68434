package report

import (
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/results"
)

// TestHeaderNamesTheGroundTruthStore: the comment's header names the pinned store a lane's
// ground truth came from, owner/name and short commit; a lane without one names none.
func TestHeaderNamesTheGroundTruthStore(t *testing.T) {
	for repo, want := range map[string]string{
		"https://github.com/sgl-project/ci-data-diffusion":     "ground truth `sgl-project/ci-data-diffusion@15b30030ef98`",
		"https://github.com/sgl-project/ci-data-diffusion.git": "ground truth `sgl-project/ci-data-diffusion@15b30030ef98`",
		"/srv/git/stores/gt.git":                               "ground truth `gt@15b30030ef98`",
		// Escaped as all untrusted text: a pull request can name any repository.
		"file:///srv/a|b`<x>.git": "ground truth <code>a&#124;b&#96;&lt;x&gt;@" + zwsp + "15b30030ef98</code>",
	} {
		r := passingReport()
		r.Lanes[0].Files = &results.Files{GroundTruth: &results.GroundTruthStore{
			Repo: repo, Commit: "15b30030ef980756788ab40072f9223fe21a5526", Path: "diffusion-ci/consistency_gt",
		}}
		if c := Comment(r); !strings.Contains(c, " · "+want+" · ") {
			t.Errorf("%s: the header does not say %q:\n%s", repo, want, c)
		}
	}
	if c := Comment(passingReport()); strings.Contains(c, "ground truth") {
		t.Errorf("a lane without a store names one:\n%s", c)
	}
}
