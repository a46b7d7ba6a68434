package history

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/diffusion-check/diffusion-check/internal/inputfile"
	"github.com/diffusion-check/diffusion-check/results"
)

// The store is a folder with one subfolder per series and one file per run in it:
//
//	STORE/<suite>--<lane>--<gpu>/<date>-<commit>-<kind>[-pr<N>]-<run id>.json
//
// A run only ever creates its own file, exclusively, so two runs never touch the same file:
// a run whose push lost the race resets to the branch as it is now and appends again (a
// rebase is not enough: git takes two runs' "prune the oldest, add mine" for two renames of
// one file; docs/history.md).

// maxFiles bounds how many store files Load reads (a store kept by Prune holds far fewer).
const maxFiles = 20000

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// part makes s usable in a file name: runs of other characters become "_", leading dots are
// dropped, and the result is at most 40 bytes; "_" for an empty string.
func part(s string) string {
	s = strings.TrimLeft(unsafeName.ReplaceAllString(s, "_"), ".")
	s = strings.ReplaceAll(s, "--", "_")
	if len(s) > 40 {
		s = s[:40]
	}
	if s == "" {
		return "_"
	}
	return s
}

// Dir is the folder of a series in the store.
// A run without a lane is in the default lane, as a merge names it.
func (s Series) Dir() string {
	return part(s.Suite) + "--" + part(cmp.Or(s.Lane, results.DefaultLane)) + "--" + part(s.GPU)
}

// FileName is a run's file name in its series folder: its date first, so that names sort in
// time order.
func (r *Run) FileName() string {
	commit := r.Commit
	if len(commit) > 12 {
		commit = commit[:12]
	}
	kind := string(r.Kind)
	if r.Kind == KindPR {
		kind += "-pr" + strconv.Itoa(r.PR)
	}
	return r.Date.UTC().Format("20060102T150405Z") + "-" + part(commit) + "-" + kind + "-" + part(r.RunID) + ".json"
}

// Write adds a run to the store and returns the path of its file. The file is created
// exclusively: a run id that is already there is an error (a re-run must say its attempt),
// never an overwrite.
func Write(store string, r *Run) (string, error) {
	if err := r.Validate(); err != nil {
		return "", fmt.Errorf("history entry: %w", err)
	}
	data, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return "", fmt.Errorf("history entry: %w", err)
	}
	data = append(data, '\n')
	if len(data) > maxFileBytes {
		return "", fmt.Errorf("history entry: %d bytes, at most %d", len(data), maxFileBytes)
	}
	dir := filepath.Join(store, r.SeriesOf().Dir())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("history store: %w", err)
	}
	// The store is a checkout others write to: a series folder that is a link would put the
	// file elsewhere. O_EXCL alone refuses a link in the file's own place.
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		return "", fmt.Errorf("history store: %s is not a folder of the store (a symbolic link, not followed)", dir)
	}
	path := filepath.Join(dir, r.FileName())
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", fmt.Errorf("history store: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", fmt.Errorf("history store: write %s: %w", path, err)
	}
	return path, nil
}

// Load reads every run of the store, oldest first. A file that is not a valid store entry
// (too large, not JSON, unknown fields, a failed Validate, or in the wrong series folder) is
// left out with a warning naming it: one bad file from a pull request must not hide the
// others. Every file is opened as untrusted (inputfile): a FIFO, a device or a symbolic link
// in the store is left out with a warning, at once; ctx ending stops the reading.
func Load(ctx context.Context, store string) (runs []*Run, warnings []error, err error) {
	paths, warnings, err := storeFiles(store)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("history store %s: %w", store, err)
		}
		r, rerr := readRun(ctx, p)
		if rerr != nil {
			warnings = append(warnings, rerr)
			continue
		}
		runs = append(runs, r)
	}
	slices.SortStableFunc(runs, func(a, b *Run) int { return a.Date.Compare(b.Date) })
	return runs, warnings, nil
}

// storeFiles lists the store's files, <series>/<name>.json, found without following a link: a
// series folder or a file that is a link, and anything that is no regular file, is left out
// with a warning, so that no file outside the store is read, and none deleted by Prune. More
// than maxFiles: the newest (by name) are listed, with a warning.
func storeFiles(store string) (paths []string, warnings []error, err error) {
	dirs, err := os.ReadDir(store)
	if err != nil {
		return nil, nil, fmt.Errorf("history store: %w", err)
	}
	for _, d := range dirs {
		dir := filepath.Join(store, d.Name())
		if !d.IsDir() {
			if d.Type()&fs.ModeSymlink != 0 {
				warnings = append(warnings, fmt.Errorf("history store %s: a symbolic link, not followed", dir))
			}
			continue
		}
		files, err := os.ReadDir(dir)
		if err != nil {
			warnings = append(warnings, fmt.Errorf("history store %s: %w", dir, err))
			continue
		}
		for _, f := range files {
			p := filepath.Join(dir, f.Name())
			switch {
			case filepath.Ext(f.Name()) != ".json":
			case !f.Type().IsRegular():
				warnings = append(warnings, fmt.Errorf("history file %s: not a regular file (%s), left alone", p, inputfile.Describe(f.Type())))
			default:
				paths = append(paths, p)
			}
		}
	}
	slices.Sort(paths)
	if len(paths) > maxFiles {
		warnings = append(warnings, fmt.Errorf("history store %s: %d files, only the newest %d read", store, len(paths), maxFiles))
		paths = paths[len(paths)-maxFiles:]
	}
	return paths, warnings, nil
}

func readRun(ctx context.Context, path string) (*Run, error) {
	data, err := inputfile.Read(ctx, path, maxFileBytes)
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe):
		return nil, fmt.Errorf("history file %s: %w", path, pe.Err)
	case err != nil:
		return nil, fmt.Errorf("history file %w", err) // inputfile's error starts with the path
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r Run
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("history file %s: %w", path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("history file %s: data after the JSON object", path)
	}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("history file %s: %w", path, err)
	}
	if dir := filepath.Base(filepath.Dir(path)); dir != r.SeriesOf().Dir() {
		return nil, fmt.Errorf("history file %s: in folder %s, but its series (%s) belongs in %s", path, dir, r.SeriesOf(), r.SeriesOf().Dir())
	}
	return &r, nil
}

// Keep bounds a series: the newest Default default-branch runs and the newest PR runs of
// pull requests are kept, older ones pruned.
type Keep struct{ Default, PR int }

// Prune deletes the oldest files of every series beyond keep (each count ≥ 1) and returns
// the paths deleted. It deletes only regular files inside the store, found as Load finds them
// (storeFiles: no link followed, at most maxFiles read). Files that do not parse are left alone
// (Load warns about them): pruning only ever removes what it can date, and a file that is not
// a regular file (inputfile) is never read.
func Prune(ctx context.Context, store string, keep Keep) ([]string, error) {
	if keep.Default < 1 || keep.PR < 1 {
		return nil, fmt.Errorf("history store: keep %d default-branch and %d pull-request runs: want at least 1 of each", keep.Default, keep.PR)
	}
	all, _, err := storeFiles(store)
	if err != nil {
		return nil, err
	}
	bySeries := map[string][]string{}
	var dirs []string
	for _, p := range all {
		d := filepath.Dir(p)
		if bySeries[d] == nil {
			dirs = append(dirs, d)
		}
		bySeries[d] = append(bySeries[d], p)
	}
	var removed []string
	for _, dir := range dirs {
		paths := bySeries[dir]
		type dated struct {
			path string
			run  *Run
		}
		byKind := map[Kind][]dated{}
		for _, p := range paths {
			if err := ctx.Err(); err != nil {
				return removed, fmt.Errorf("history store %s: %w", store, err)
			}
			if r, err := readRun(ctx, p); err == nil {
				byKind[r.Kind] = append(byKind[r.Kind], dated{p, r})
			}
		}
		for kind, n := range map[Kind]int{KindDefault: keep.Default, KindPR: keep.PR} {
			ds := byKind[kind]
			slices.SortStableFunc(ds, func(a, b dated) int { return a.run.Date.Compare(b.run.Date) })
			for len(ds) > n {
				if err := os.Remove(ds[0].path); err != nil && !errors.Is(err, os.ErrNotExist) {
					return removed, fmt.Errorf("history store: prune: %w", err)
				}
				removed = append(removed, ds[0].path)
				ds = ds[1:]
			}
		}
	}
	slices.Sort(removed)
	return removed, nil
}
