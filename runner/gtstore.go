package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/diffusion-check/diffusion-check/internal/gitstore"
	"github.com/diffusion-check/diffusion-check/suite"
)

// fetchStore fetches the suite's pinned ground-truth store (`ground_truth: {repo, commit,
// path}`) into opts.GTCache, once per host and store, and points the run's ground truth at
// its folder there; the run's first lines say which store and where. A partition none of
// whose cases compares with ground truth fetches nothing. A store the repository lacks (its
// commit or its folder) and a gt run, which writes a folder, are configuration errors; a
// fetch that fails (the network, git missing) is not. A store over the disk cap is one too,
// saying how to raise the cap.
func (cc *consistencyConfig) fetchStore(ctx context.Context, opts Options, cases []*suite.Case) error {
	st := opts.Suite.GroundTruthStore
	if st == nil {
		return nil
	}
	where := opts.Suite.Path + ": ground_truth"
	compares := false
	for _, c := range cases {
		visual, audio := comparesWithGT(c)
		compares = compares || visual || audio
	}
	if opts.Mode != ModeGT && (!compares || opts.SkipConsistency) {
		return nil
	}
	if opts.Mode == ModeGT {
		return &ConfigError{fmt.Errorf("%s is a git store pinned at a commit (%s): run --mode gt writes a folder; name one in ground_truth, "+
			"commit it to the store's repository, and pin the new commit", where, st)}
	}
	if opts.GTCache == "" {
		return &ConfigError{fmt.Errorf("%s: no cache folder to fetch %s into: set DIFFUSION_CHECK_GT_CACHE, XDG_CACHE_HOME or HOME", where, st)}
	}
	// git gets the servers' environment (no token; nil: this process's).
	f := gitstore.Fetcher{Cache: opts.GTCache, Env: serverEnviron(opts.Environ), MaxBytes: opts.GTMaxBytes,
		Logf: func(format string, args ...any) { fmt.Fprintf(opts.Progress, "ground truth: "+format+"\n", args...) }}
	dir, fetched, err := f.Fetch(ctx, *st)
	if err != nil {
		err = fmt.Errorf("%s: %w", where, err)
		var missing *gitstore.NotFoundError
		if errors.As(err, &missing) {
			return &ConfigError{err}
		}
		if over := (*gitstore.CapError)(nil); errors.As(err, &over) {
			return &ConfigError{fmt.Errorf("%w; if the store is meant to be this large, set DIFFUSION_CHECK_GT_MAX_MIB above %d", err, over.Cap>>20)}
		}
		return err
	}
	cc.gt.Dir, cc.store = dir, st
	how := "cached at (every file verified against the commit's tree)"
	if fetched {
		how = "fetched into"
	}
	fmt.Fprintf(opts.Progress, "ground truth: %s, %s %s\n", st, how, dir)
	return nil
}
