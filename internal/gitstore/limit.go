package gitstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"time"
)

// DefaultMaxBytes is the disk a store's fetch may fill when Fetcher.MaxBytes is 0: git's
// objects and the checked-out folder together, so about twice the store's folder. It bounds
// what a repository a pull request names can make the runner write, not what a store needs.
const DefaultMaxBytes int64 = 4 << 30

// usagePoll is how often the files of a fetch under way are summed against the cap.
const usagePoll = 200 * time.Millisecond

// CapError says that a fetch filled more disk than the Fetcher's cap: git was stopped, and
// nothing it wrote is kept.
type CapError struct {
	Store        Store
	Reached, Cap int64 // bytes
}

func (e *CapError) Error() string {
	return fmt.Sprintf("the fetch of %s was stopped at %.1f MiB on disk, over its cap of %.1f MiB",
		e.Store, float64(e.Reached)/(1<<20), float64(e.Cap)/(1<<20))
}

// capped runs fn, the git commands that fill dir, under the Fetcher's disk cap: the regular
// files below dir (found without following a link) are summed every usagePoll while fn runs,
// and once more when it returns. The first sum over the cap ends fn's context, which stops
// git (its process group), and the result is a *CapError whatever fn returned.
func (f Fetcher) capped(ctx context.Context, s Store, dir string, fn func(ctx context.Context) error) error {
	limit := cmp.Or(f.MaxBytes, DefaultMaxBytes)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(usagePoll)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if n := diskUsage(dir); n > limit {
					cancel(&CapError{Store: s, Reached: n, Cap: limit})
					return
				}
			}
		}
	})
	err := fn(ctx)
	close(done)
	wg.Wait()
	if over := (*CapError)(nil); errors.As(context.Cause(ctx), &over) {
		return over
	}
	if n := diskUsage(dir); n > limit {
		return &CapError{Store: s, Reached: n, Cap: limit}
	}
	return err
}

// diskUsage is the size of the regular files below dir, found without following a link; a
// file that goes while it is summed (git renames and removes its temporary files) counts
// for nothing.
func diskUsage(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil //nolint:nilerr // a folder that went, or no file: nothing to add
		}
		if info, err := d.Info(); err == nil {
			n += info.Size()
		}
		return nil
	})
	return n
}
