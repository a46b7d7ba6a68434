package main

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
)

// groundTruthFile is the Markdown table `run --mode gt` writes beside results.json: which
// ground-truth files each case wrote and how they differ from the old ones, the body of the
// regeneration's pull request.
const groundTruthFile = "ground-truth.md"

// writeGroundTruthTable writes the table of a gt run's ground_truth.write checks into dir
// and returns its path.
func writeGroundTruthTable(dir string, res *results.Result) (string, error) {
	// The runner names files by absolute path; the table is read in the repository.
	wd, _ := os.Getwd()
	var b strings.Builder
	lanes := "every lane" // a run without --lane, not a lane named ""
	if res.Lane != "" {
		lanes = "lane " + res.Lane
	}
	fmt.Fprintf(&b, "Ground truth of %s, partition %d/%d (GPU %s), from request 1 of each case.\n\n",
		lanes, res.Partition.Index, res.Partition.Total, cmp.Or(res.GPU, "not known"))
	b.WriteString("| Case | Status | Files (state, change against the old file) |\n|---|---|---|\n")
	for _, c := range res.Cases {
		wrote := false
		for _, rr := range c.Requests {
			for _, ck := range rr.Checks {
				if ck.Name != checks.GroundTruthWrite || ck.Status == results.Skip {
					continue
				}
				wrote = true
				detail := ck.Detail
				if wd != "" {
					detail = strings.ReplaceAll(detail, wd+string(filepath.Separator), "")
				}
				fmt.Fprintf(&b, "| `%s` | %s | %s |\n", c.ID, ck.Status, cell(detail))
			}
		}
		if !wrote {
			fmt.Fprintf(&b, "| `%s` | %s | nothing written: request 1 did not produce an output |\n", c.ID, c.Status)
		}
	}
	path := filepath.Join(dir, groundTruthFile)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return "", fmt.Errorf("write ground truth table: %w", err)
	}
	return path, nil
}

// cell makes a check detail fit one Markdown table cell: one file per line.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "; ", "<br>")
	return strings.ReplaceAll(s, "\n", "<br>")
}

// gtCacheEnv names the folder of the fetched ground-truth stores, over the default below (as
// scripts/lint's GOLANGCI_LINT_DIR names its own under the same user cache).
const gtCacheEnv = "DIFFUSION_CHECK_GT_CACHE"

// gtMaxEnv caps, in MiB, the disk one fetch of a ground-truth store may fill (git's objects
// and the checkout); unset is gitstore.DefaultMaxBytes.
const gtMaxEnv = "DIFFUSION_CHECK_GT_MAX_MIB"

// gtMaxBytes is $DIFFUSION_CHECK_GT_MAX_MIB in bytes; 0 (the default cap) when it is unset,
// an error naming the variable when it is no whole number of MiB from 1 to 1 TiB.
func gtMaxBytes(e env) (int64, error) {
	v := e.getenv(gtMaxEnv)
	if v == "" {
		return 0, nil
	}
	mib, err := strconv.ParseInt(v, 10, 64)
	if err != nil || mib < 1 || mib > 1<<20 {
		return 0, fmt.Errorf("%s=%q: want a whole number of MiB from 1 to %d", gtMaxEnv, v, 1<<20)
	}
	return mib << 20, nil
}

// gtCacheDir is where `run` keeps the ground-truth stores it fetched (a suite's
// `ground_truth: {repo, commit, path}`), shared by every run of the user on the host:
// $DIFFUSION_CHECK_GT_CACHE, else $XDG_CACHE_HOME/diffusion-check/gt, else
// ~/.cache/diffusion-check/gt (the XDG base directory rule, which ignores a relative
// XDG_CACHE_HOME). "" when none is set: a suite that names a store is then refused, saying so.
func gtCacheDir(e env) string {
	if d := e.getenv(gtCacheEnv); d != "" {
		return d
	}
	if base := cacheBase(e); base != "" {
		return filepath.Join(base, "gt")
	}
	return ""
}

// cacheBase is diffusion-check's folder of the user's cache: $XDG_CACHE_HOME/diffusion-check,
// else ~/.cache/diffusion-check (the XDG base directory rule, which ignores a relative
// XDG_CACHE_HOME); "" when neither is set.
func cacheBase(e env) string {
	base := e.getenv("XDG_CACHE_HOME")
	if !filepath.IsAbs(base) {
		home := e.getenv("HOME")
		if home == "" {
			return ""
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "diffusion-check")
}
