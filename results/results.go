package results

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/diffusion-check/diffusion-check/internal/inputfile"
)

// The files a Writer owns inside its folder.
const (
	RequestsFile = "requests.jsonl"
	ResultsFile  = "results.json"
	ArtifactsDir = "artifacts"
)

// reserveFile holds disk space for results.json while a run measures: on a full disk its
// space is given back just before results.json is written, so that the run's verdicts are
// saved although the disk filled up under it. Close removes it.
const reserveFile = ".results.reserve"

// reserveBase is the space reserved at the start; each request line adds reservePerLine
// times its length (results.json holds the request again, indented).
const (
	reserveBase    = 64 << 10
	reservePerLine = 3
)

// Writer owns the files of one run's output folder (--out): requests.jsonl, appended as
// each request finishes, results.json, rewritten atomically, the artifacts tree, and a
// reserve of disk space for results.json. Its methods are safe for concurrent use.
type Writer struct {
	dir string

	mu       sync.Mutex
	f        *os.File // requests.jsonl; nil once closed
	reserve  *os.File // reserveFile; nil once given back
	reserved int64
	place    Placement
}

// Placement is what every requests.jsonl line records of where its request belongs: the
// lane of its case, and the partition and plan of its run. A results.json that is lost is
// rebuilt from the lines into that lane and partition, never a guessed one.
type Placement struct {
	Partition Partition
	PlanHash  string
	// Lanes is the lane of each case of the run, by case id.
	Lanes map[string]string
}

// requestLine is one line of requests.jsonl: a request and its placement.
type requestLine struct {
	RequestResult
	Lane      string     `json:"lane,omitempty"`
	Partition *Partition `json:"partition,omitempty"`
	PlanHash  string     `json:"plan_hash,omitempty"`
}

// Place sets the placement every later request line records.
func (r *Writer) Place(p Placement) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.place = p
}

// IsDiskFull reports whether err is a write that failed for want of space: a full disk
// (ENOSPC), a quota (EDQUOT), or a file size limit (EFBIG). Such an error is the machine's,
// never the pull request's.
func IsDiskFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EFBIG)
}

// ServersDir is the folder of the server logs and perf logs of a run, inside its --out.
const ServersDir = "servers"

// StaleOutError is a --out folder that holds what an earlier run wrote: a new run into it
// without Force would leave that run's verdict for report to find.
type StaleOutError struct {
	Dir   string
	Found []string
}

// Error names the folder and what it holds.
func (e *StaleOutError) Error() string {
	return fmt.Sprintf("--out %s holds an earlier run (%s): report would show its verdict; "+
		"use another folder, remove it, or pass --force to remove those files first", e.Dir, strings.Join(e.Found, ", "))
}

// ClearOut makes sure dir holds nothing of an earlier run: no results.json, requests.jsonl,
// artifacts/ or servers/ (server and perf logs). Without force it refuses a folder that holds
// any of them (a *StaleOutError); with force it removes exactly those, and returns their
// names. Nothing else in dir is touched.
func ClearOut(dir string, force bool) (removed []string, err error) {
	var found []string
	for _, name := range []string{ResultsFile, RequestsFile, ArtifactsDir, ServersDir, reserveFile} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			found = append(found, name)
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("check --out %s: %w", dir, err)
		}
	}
	if len(found) == 0 {
		return nil, nil
	}
	if !force {
		return nil, &StaleOutError{Dir: dir, Found: found}
	}
	for _, name := range found {
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return removed, fmt.Errorf("remove the earlier run's %s: %w", name, err)
		}
		removed = append(removed, name)
	}
	return removed, nil
}

// NewWriter creates dir and dir/artifacts and starts a fresh requests.jsonl in it. A
// requests.jsonl left by an earlier run into the same folder is truncated, as results.json
// will be overwritten: the two files always describe the same run.
func NewWriter(dir string) (*Writer, error) {
	if err := os.MkdirAll(filepath.Join(dir, ArtifactsDir), 0o755); err != nil {
		return nil, fmt.Errorf("create results folder: %w", err)
	}
	// O_APPEND: each request is one write at the end of the file, never interleaved with
	// another, and nothing is buffered in this process, so a crash or SIGKILL loses only
	// the line being written.
	// The folder may hold what a pull request's job left (an artifact restored into it): a
	// symbolic link or FIFO planted as requests.jsonl or the reserve is refused, not written
	// through or waited on (inputfile). NewWriter takes no context: two local opens.
	f, err := inputfile.OpenFile(context.Background(), filepath.Join(dir, RequestsFile), os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open requests log: %w", err)
	}
	r := &Writer{dir: dir, f: f}
	// A disk too full for the reserve is too full for the run's verdicts: refuse it before
	// any server starts, rather than measure what cannot be saved.
	res, err := inputfile.OpenFile(context.Background(), filepath.Join(dir, reserveFile), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err == nil {
		r.reserve = res
		err = r.growReserve(reserveBase)
	}
	if err != nil {
		_ = r.Close() // the reserve error is the one to report
		return nil, fmt.Errorf("reserve space for results.json in %s: %w", dir, err)
	}
	return r, nil
}

// growReserve writes n more bytes to the reserve (zeros written, not a sparse hole: only
// written blocks hold space). The caller holds mu or owns r alone.
func (r *Writer) growReserve(n int64) error {
	if r.reserve == nil {
		return nil
	}
	zeros := make([]byte, min(n, 64<<10))
	for n > 0 {
		k, err := r.reserve.WriteAt(zeros[:min(n, int64(len(zeros)))], r.reserved)
		r.reserved += int64(k)
		n -= int64(k)
		if err != nil {
			return err
		}
	}
	return nil
}

// giveBackReserve removes the reserve, freeing its space for results.json. The caller holds
// mu.
func (r *Writer) giveBackReserve() error {
	if r.reserve == nil {
		return nil
	}
	err := r.reserve.Close()
	r.reserve = nil
	if rerr := os.Remove(filepath.Join(r.dir, reserveFile)); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		err = errors.Join(err, rerr)
	}
	return err
}

// Request appends rr, one JSON object on one line, to requests.jsonl, with the placement
// (Place) of its case. rr.Case must name its case: the line is read back on its own.
func (r *Writer) Request(rr RequestResult) error {
	if rr.Case == "" {
		return fmt.Errorf("record request %d/%d: no case id", rr.Index, rr.Of)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	l := requestLine{RequestResult: rr, Lane: r.place.Lanes[rr.Case], PlanHash: r.place.PlanHash}
	if r.place.Partition.Total > 0 {
		l.Partition = &r.place.Partition
	}
	line, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("record case %s request %d/%d: %w", rr.Case, rr.Index, rr.Of, err)
	}
	line = append(line, '\n')
	if r.f == nil {
		return fmt.Errorf("record case %s request %d/%d: writer closed", rr.Case, rr.Index, rr.Of)
	}
	// Whole lines or nothing: a write cut short (a full disk) is taken back, so that the
	// lines after it, once there is room again, are not glued to a torn one.
	end, err := r.f.Seek(0, io.SeekEnd)
	if err != nil {
		return fmt.Errorf("record case %s request %d/%d: %w", rr.Case, rr.Index, rr.Of, err)
	}
	if n, err := r.f.Write(line); err != nil {
		if n > 0 {
			if terr := r.f.Truncate(end); terr != nil {
				err = errors.Join(err, fmt.Errorf("take back the partial line: %w", terr))
			}
		}
		return fmt.Errorf("record case %s request %d/%d in %s (not saved there; results.json will hold it): %w", rr.Case, rr.Index, rr.Of, RequestsFile, err)
	}
	// Best effort: a reserve that cannot grow is a disk filling up, which the writes that
	// matter (artifacts, this file, results.json) report themselves.
	_ = r.growReserve(reservePerLine * int64(len(line)))
	return nil
}

// Results writes res, judged (judge.Finalize: its statuses are set), with its schema to
// results.json atomically: readers see the old file or the new one,
// never a part. It may be called more than once (for example after each case, and at the end).
func (r *Writer) Results(res *Result) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := judged(res); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	res.Schema = Schema
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	b = append(b, '\n')
	err = writeFileAtomic(filepath.Join(r.dir, ResultsFile), b)
	if IsDiskFull(err) && r.reserve != nil {
		// The disk filled up during the run: give back the space reserved for this write.
		if rerr := r.giveBackReserve(); rerr != nil {
			err = errors.Join(err, fmt.Errorf("give back the reserve: %w", rerr))
		} else {
			err = writeFileAtomic(filepath.Join(r.dir, ResultsFile), b)
		}
	}
	if err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}

// writeFileAtomic writes data to a temporary file beside path, syncs it and renames it over
// path, then syncs the folder so the rename itself survives a crash.
func writeFileAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close() // the write already failed; that error is the one returned
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	// Best effort: some file systems refuse to sync a folder, and the data is in place anyway.
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// ArtifactDir creates and returns the folder for the artifacts of one request:
// DIR/artifacts/<caseID>/request-<index>/, or DIR/artifacts/<caseID>/confirm-<index>/ for a
// confirmation request. caseID must be a single, local path element.
func (r *Writer) ArtifactDir(caseID string, index int, confirm bool) (string, error) {
	if index < 1 {
		return "", fmt.Errorf("artifact folder: case %s: request index %d, want ≥ 1", caseID, index)
	}
	if confirm {
		return r.artifactDir(caseID, "confirm-"+strconv.Itoa(index))
	}
	return r.artifactDir(caseID, RequestFolder(index))
}

// LoadArtifactDir creates and returns the folder for the artifacts of a case's server start
// (its load): DIR/artifacts/<caseID>/load/.
func (r *Writer) LoadArtifactDir(caseID string) (string, error) {
	return r.artifactDir(caseID, LoadFolder)
}

// LoadFolder is the folder of a case's server-start artifacts, beside its request-<i>/.
const LoadFolder = "load"

// BatchingArtifactDir creates and returns the folder of the outputs of a case's
// dynamic-batching smoke: DIR/artifacts/<caseID>/batching/.
func (r *Writer) BatchingArtifactDir(caseID string) (string, error) {
	return r.artifactDir(caseID, "batching")
}

// memoryDir is the folder of the memory timelines of a run's server starts, inside
// DIR/artifacts/ (one <server start>.json each).
const memoryDir = "memory"

// TimelinePath creates DIR/artifacts/memory/ and returns the path of the memory timeline of
// the server start named start (its folder under servers/, e.g. "01-sglang").
func (r *Writer) TimelinePath(start string) (string, error) {
	rel, err := TimelineFile(start)
	if err != nil {
		return "", err
	}
	path := filepath.Join(r.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("memory timeline of %s: %w", start, err)
	}
	return path, nil
}

// TimelineFile is the memory timeline of the server start named start as a record names it,
// relative to the output folder: artifacts/memory/<start>.json.
func TimelineFile(start string) (string, error) {
	if !plainName(start) {
		return "", fmt.Errorf("memory timeline: server start %q is not a plain file name", start)
	}
	return ArtifactsDir + "/" + memoryDir + "/" + start + ".json", nil
}

func (r *Writer) artifactDir(caseID, folder string) (string, error) {
	if !plainName(caseID) {
		return "", fmt.Errorf("artifact folder: case id %q is not a plain folder name", caseID)
	}
	d := filepath.Join(r.dir, ArtifactsDir, caseID, folder)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", fmt.Errorf("artifact folder: case %s %s: %w", caseID, folder, err)
	}
	return d, nil
}

// Rel is path, a file the run writes under its output folder, as a record names it: relative
// to the folder, with "/".
func (r *Writer) Rel(path string) (string, error) {
	rel, err := filepath.Rel(r.dir, path)
	if err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%s is not in the output folder %s", path, r.dir)
	}
	return filepath.ToSlash(rel), nil
}

// ArtifactFile is the file a record names (rel: a Picture's Path, relative to the output
// folder out) when it is one of the output folder's artifacts; a record is the pull request's
// to write, so a path that is absolute, leaves the folder or lies outside artifacts/ is
// refused, naming it.
func ArtifactFile(out, rel string) (string, error) {
	local := filepath.FromSlash(rel)
	if !filepath.IsLocal(local) || !strings.HasPrefix(filepath.ToSlash(filepath.Clean(local)), ArtifactsDir+"/") {
		return "", fmt.Errorf("%q is not a file under %s/ of %s", rel, ArtifactsDir, out)
	}
	return filepath.Join(out, local), nil
}

// RequestFolder is the name of request i's artifact folder under its case's,
// "request-<i>" (ArtifactDir); publish names its pictures on the pictures branch after it.
func RequestFolder(i int) string { return "request-" + strconv.Itoa(i) }

// plainName says whether s is a single, local path element.
func plainName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, `/\`) && filepath.IsLocal(s)
}

// maxInputBytes bounds a results.json or requests.jsonl that a reader accepts: far above
// what a run writes (a few MiB for thousands of requests), far below what would exhaust a
// report job's memory. Inputs come from artifacts, which a pull request's code may have
// written.
const maxInputBytes int64 = 256 << 20

// Close closes requests.jsonl and removes the space reserve. Later calls to Request fail;
// Close again does nothing.
func (r *Writer) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	if err := r.giveBackReserve(); err != nil {
		errs = append(errs, fmt.Errorf("remove the space reserve: %w", err))
	}
	if r.f != nil {
		err := r.f.Close()
		r.f = nil
		if err != nil {
			errs = append(errs, fmt.Errorf("close requests log: %w", err))
		}
	}
	return errors.Join(errs...)
}

// truncatedLineError is the warning ReadRequests gives for a last line cut short, as a crash
// in the middle of a write leaves it. The requests before it are intact.
type truncatedLineError struct {
	Path string
	Line int
	Err  error
}

// Error says which line was cut short and that it was ignored.
func (e *truncatedLineError) Error() string {
	return fmt.Sprintf("%s:%d: last line is truncated (the run stopped while writing it), ignored: %v", e.Path, e.Line, e.Err)
}

// Unwrap returns the JSON error the line gave.
func (e *truncatedLineError) Unwrap() error { return e.Err }

// ReadRequests reads a requests.jsonl back, in file order (the order requests finished). A
// last line without its newline that does not parse is what a crash mid-write leaves: it is
// returned as a warning (a *truncatedLineError), not an error. Any other bad line is an error
// naming the file and line, and stops when ctx ends.
func ReadRequests(ctx context.Context, path string) (reqs []RequestResult, warnings []error, err error) {
	lines, warnings, err := readLines(ctx, path)
	for _, l := range lines {
		reqs = append(reqs, l.RequestResult)
	}
	return reqs, warnings, err
}

// readLines is ReadRequests with each line's placement, and stops when ctx ends. Only a
// regular file of at most maxInputBytes is read.
func readLines(ctx context.Context, path string) (reqs []requestLine, warnings []error, err error) {
	data, err := inputfile.Read(ctx, path, maxInputBytes)
	if err != nil {
		return nil, nil, fmt.Errorf("read requests: %w", err)
	}
	n := 0
	for len(data) > 0 {
		n++
		line, rest, complete := bytes.Cut(data, []byte{'\n'})
		data = rest
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var rr requestLine
		if err := json.Unmarshal(line, &rr); err != nil {
			if !complete {
				warnings = append(warnings, &truncatedLineError{Path: path, Line: n, Err: err})
				break
			}
			return nil, nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		reqs = append(reqs, rr)
	}
	return reqs, warnings, nil
}

// ReadContext reads a results.json written by Writer.Results. A file with another schema (or
// none) is an error that names the file and the schema it found. A results.json marked
// incomplete (the run ended before its final write) comes back completed with the requests of
// the requests.jsonl beside it, as readOut does, so that no measured request is lost. Only a
// regular file of at most maxInputBytes is read, and the read stops when ctx ends.
func ReadContext(ctx context.Context, path string) (*Result, error) {
	res, err := readResultsFile(ctx, path)
	if err != nil || res.Incomplete == "" || filepath.Base(path) != ResultsFile {
		return res, err
	}
	full, _, err := readOut(ctx, filepath.Dir(path))
	return full, err
}

// readResultsFile reads one results.json as it is.
func readResultsFile(ctx context.Context, path string) (*Result, error) {
	data, err := inputfile.Read(ctx, path, maxInputBytes)
	if err != nil {
		return nil, fmt.Errorf("read results: %w", err)
	}
	var head struct {
		Schema *string `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%s: %w", posOf(path, data, err), err)
	}
	switch {
	case head.Schema == nil:
		return nil, fmt.Errorf("%s: no \"schema\" field: not a diffusion-check results file (want %q)", path, Schema)
	case *head.Schema != Schema:
		return nil, fmt.Errorf("%s: schema %q is not supported (want %q)", path, *head.Schema, Schema)
	}
	var res Result
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, fmt.Errorf("%s: %w", posOf(path, data, err), err)
	}
	if err := requestIndexes(&res); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// The statuses are the run's judge's, written with the file: checked, never computed.
	if err := judged(&res); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &res, nil
}

// requestIndexes checks that every case holds each of its requests exactly once: indexes 1
// to "of", all with the same "of". A results file that misses one or repeats one would let a
// failure go unreported, or count one twice.
func requestIndexes(res *Result) error {
	var errs []error
	for _, c := range res.Cases {
		if len(c.Requests) == 0 {
			continue
		}
		of := c.Requests[0].Of
		seen := map[int]bool{}
		for _, rr := range c.Requests {
			switch {
			case rr.Of != of:
				errs = append(errs, fmt.Errorf("case %s: request %d says it is of %d, another of %d", c.ID, rr.Index, rr.Of, of))
			case rr.Index < 1 || rr.Index > of:
				errs = append(errs, fmt.Errorf("case %s: request index %d is outside 1..%d", c.ID, rr.Index, of))
			case seen[rr.Index]:
				errs = append(errs, fmt.Errorf("case %s: request %d/%d appears twice", c.ID, rr.Index, of))
			}
			seen[rr.Index] = true
		}
		for i := 1; i <= of; i++ {
			if !seen[i] {
				errs = append(errs, fmt.Errorf("case %s: request %d/%d is missing", c.ID, i, of))
			}
		}
	}
	return errors.Join(append(errs, confirmIndexes(res)...)...)
}

// confirmIndexes checks the confirmation requests of every case: each marked as one, in the
// order sent (indexes 1, 2, … of one "of"), so that none is taken for a request of the case.
func confirmIndexes(res *Result) []error {
	var errs []error
	for _, c := range res.Cases {
		for i, rr := range c.Confirm {
			switch {
			case !rr.Confirm:
				errs = append(errs, fmt.Errorf("case %s: confirm[%d] is not marked \"confirm\": true", c.ID, i))
			case rr.Index != i+1 || rr.Of != c.Confirm[0].Of || rr.Of < len(c.Confirm):
				errs = append(errs, fmt.Errorf("case %s: confirm[%d] is confirmation request %d/%d, want %d of at least %d, in the order sent",
					c.ID, i, rr.Index, rr.Of, i+1, len(c.Confirm)))
			}
		}
	}
	return errs
}

// posOf returns "path:line" for a JSON decoding error that carries an offset, else path.
func posOf(path string, data []byte, err error) string {
	var off int64 = -1
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		off = syn.Offset
	case errors.As(err, &typ):
		off = typ.Offset
	}
	if off < 0 || off > int64(len(data)) {
		return path
	}
	return fmt.Sprintf("%s:%d", path, 1+bytes.Count(data[:off], []byte{'\n'}))
}

// judged says which status of res is not one of the statuses a judged result has: the
// writer stores the judge's statuses, never computes them, and a result that was not judged
// (an empty status, a word that is not ours) is a bug to report, not a file to write.
func judged(res *Result) error {
	if !res.Status.Valid() {
		return fmt.Errorf("the run's status %q is not a judged one", res.Status)
	}
	for _, c := range res.Cases {
		if !c.Status.Valid() {
			return fmt.Errorf("case %s: status %q is not a judged one", c.ID, c.Status)
		}
		for _, rr := range c.Requests {
			if !rr.Status.Valid() {
				return fmt.Errorf("case %s request %d/%d: status %q is not a judged one", c.ID, rr.Index, rr.Of, rr.Status)
			}
		}
	}
	return nil
}
