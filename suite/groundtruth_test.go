package suite

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/internal/gitstore"
)

// sglangPin is SGLang's ground-truth store: SGL_TEST_FILES_CI_DATA_REPO at
// SGL_TEST_FILES_CI_DATA_REVISION, under diffusion-ci/consistency_gt
// (SGL_TEST_FILES_CONSISTENCY_GT_ROOT; python/sglang/multimodal_gen/test/test_utils.py,
// pandalee99/sglang @ cce0a1244).
const sglangPin = "15b30030ef980756788ab40072f9223fe21a5526"

const gtCases = "servers: {ref: {builtin: {}}}\ncases:\n  - {id: a, server: ref, modality: image, request: {size: 8x8}}\n"

// TestGroundTruthGitStore: `ground_truth:` is a folder, or a git store pinned at a commit;
// a local repository's path is resolved against the suite's folder, a URL is kept as written.
func TestGroundTruthGitStore(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "suite.yaml")
	for name, tc := range map[string]struct {
		yaml   string
		folder string
		store  *gitstore.Store
	}{
		"a folder": {yaml: "ground_truth: gt\n", folder: filepath.Join(dir, "gt")},
		"SGLang's store": {
			yaml: "ground_truth:\n  repo: https://github.com/sgl-project/ci-data-diffusion\n  commit: " + sglangPin +
				"\n  path: diffusion-ci/consistency_gt\n",
			store: &gitstore.Store{Repo: "https://github.com/sgl-project/ci-data-diffusion", Commit: sglangPin, Path: "diffusion-ci/consistency_gt"},
		},
		"a local repository, its root": {
			yaml:  "ground_truth: {repo: stores/gt.git, commit: " + sglangPin + "}\n",
			store: &gitstore.Store{Repo: filepath.Join(dir, "stores", "gt.git"), Commit: sglangPin},
		},
		"a file URL": {
			yaml:  "ground_truth: {repo: 'file:///srv/gt.git', commit: " + sglangPin + ", path: gt}\n",
			store: &gitstore.Store{Repo: "file:///srv/gt.git", Commit: sglangPin, Path: "gt"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := Parse(path, []byte(tc.yaml+gtCases))
			if err != nil {
				t.Fatal(err)
			}
			if s.GroundTruth != tc.folder {
				t.Errorf("GroundTruth %q, want %q", s.GroundTruth, tc.folder)
			}
			switch {
			case (s.GroundTruthStore == nil) != (tc.store == nil):
				t.Errorf("GroundTruthStore %+v, want %+v", s.GroundTruthStore, tc.store)
			case tc.store != nil && *s.GroundTruthStore != *tc.store:
				t.Errorf("GroundTruthStore %+v, want %+v", *s.GroundTruthStore, *tc.store)
			}
		})
	}
}

// TestGroundTruthGitStoreErrors: what is not pinned, or would leave the checkout, is refused
// when the suite is read, naming the line and the key.
func TestGroundTruthGitStoreErrors(t *testing.T) {
	for name, tc := range map[string]struct{ yaml, want string }{
		"a branch": {"ground_truth: {repo: 'https://github.com/sgl-project/ci-data-diffusion', commit: main}\n",
			`suite.yaml:1: ground_truth.commit: commit "main" is not a commit SHA (a branch or a tag moves); write the full 40-hex commit SHA`},
		"a short SHA": {"ground_truth:\n  repo: https://github.com/sgl-project/ci-data-diffusion\n  commit: 15b30030ef98\n",
			`suite.yaml:3: ground_truth.commit: commit "15b30030ef98" is a short SHA`},
		"no commit": {"ground_truth: {repo: 'https://github.com/sgl-project/ci-data-diffusion'}\n",
			"suite.yaml:1: ground_truth.commit: missing"},
		"a path out of the checkout": {"ground_truth: {repo: x.git, commit: " + sglangPin + ", path: ../x}\n",
			`suite.yaml:1: ground_truth.path: path "../x" leaves the repository`},
		"an empty path": {"ground_truth: {repo: x.git, commit: " + sglangPin + ", path: ''}\n",
			"suite.yaml:1: ground_truth.path: empty; leave the key out for the repository's root"},
		"ssh": {"ground_truth: {repo: 'git@github.com:sgl-project/ci-data-diffusion.git', commit: " + sglangPin + "}\n",
			"ground_truth.repo: repo \"git@github.com:sgl-project/ci-data-diffusion.git\" is an ssh or remote-helper address"},
		"an unknown key": {"ground_truth: {repo: x.git, commit: " + sglangPin + ", ref: main}\n",
			`suite.yaml:1: ground_truth: unknown key "ref" (allowed: repo, commit, path)`},
		"a list": {"ground_truth: [gt]\n",
			"suite.yaml:1: ground_truth: want a folder, or a pinned git store {repo, commit, path}, got a list"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("suite.yaml", []byte(tc.yaml+gtCases))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}
