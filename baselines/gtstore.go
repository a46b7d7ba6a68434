package baselines

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/diffusion-check/diffusion-check/internal/inputfile"
)

// The two sources of SGLang's ground-truth store, sgl-project/ci-data-diffusion's
// diffusion-ci/consistency_gt at a pinned commit (test_utils.py SGL_TEST_FILES_CI_DATA_REPO,
// SGL_TEST_FILES_CI_DATA_REVISION, pandalee99/sglang @ cce0a1244): official_generated holds
// outputs of the reference implementation (diffusers, …) for the cases its case_map.json
// lists, sglang_generated outputs of SGLang itself.
const (
	gtOfficial = "official_generated"
	gtSGLang   = "sglang_generated"
)

// caseMapMax bounds case_map.json, read as untrusted input (a pull request can change a store
// checked out in its workspace).
const caseMapMax = 4 << 20

// sources are the store sources a case's ground truth is looked for in, in SGLang's order
// (_remote_consistency_gt_base_urls): a folder laid out as SGLang's store (it holds
// official_generated/ or sglang_generated/) gives official_generated first, with only the
// files its case_map.json declares for the case (_official_consistency_gt_candidate_is_declared),
// when it declares any, then sglang_generated; any other folder is one source, itself.
func (g GroundTruth) sources(caseID string) ([]gtFolder, error) {
	official, sglang := isDir(filepath.Join(g.Dir, gtOfficial)), isDir(filepath.Join(g.Dir, gtSGLang))
	if !official && !sglang {
		return []gtFolder{{}}, nil
	}
	var out []gtFolder
	if official {
		declared, err := readCaseMap(filepath.Join(g.Dir, gtOfficial, "case_map.json"), gtAlias(caseID))
		if err != nil {
			return nil, err
		}
		if len(declared) > 0 {
			out = append(out, gtFolder{prefix: gtOfficial + "/", source: gtOfficial, declared: declared})
		}
	}
	if sglang {
		out = append(out, gtFolder{prefix: gtSGLang + "/", source: gtSGLang})
	}
	return out, nil
}

// readCaseMap reads the outputs case_map.json declares for a case: {"cases": {"<id>":
// {"outputs": ["<file>", …]}}}. A missing file declares nothing (SGLang warns and uses
// sglang_generated); a malformed one is an error naming it (stricter than SGLang's warning).
func readCaseMap(path, caseID string) (map[string]bool, error) {
	// Lookup takes no context: this is one bounded read of a local file.
	data, err := inputfile.Read(context.Background(), path, caseMapMax)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ground truth case map: %w", err)
	}
	var m struct {
		Cases map[string]struct {
			Outputs []string `json:"outputs"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("ground truth case map %s: %w", path, err)
	}
	out := map[string]bool{}
	for _, o := range m.Cases[caseID].Outputs {
		out[filepath.Base(o)] = true
	}
	return out, nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// GTSourceNote names the source of a ground truth from the store, for the report: made by
// the reference implementation (gtOfficial) or by SGLang (gtSGLang).
func GTSourceNote(source string) string {
	switch source {
	case gtOfficial:
		return "ground truth: " + gtOfficial + " (made by the reference implementation)"
	case gtSGLang:
		return "ground truth: " + gtSGLang + " (made by SGLang)"
	}
	return "ground truth: " + source
}
