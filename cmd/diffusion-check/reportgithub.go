package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/gh"
	"github.com/diffusion-check/diffusion-check/internal/inputfile"
	"github.com/diffusion-check/diffusion-check/internal/pictures"
	"github.com/diffusion-check/diffusion-check/report"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/suite"
)

// What report --publish adds beside the comment and the statuses: a check run per lane
// (the Checks tab, with annotations on the suite file's case lines) and the failure pictures
// on the pictures branch, shown inline in the comment. Neither may cost the comment or the
// statuses: a token that may not write them (403), a fork's pull request, or GitHub failing
// them leaves a notice, and the report goes on.

// checkRunsNotice says what a refused check run needs.
const checkRunsNotice = `diffusion-check could not create its check runs: the token may not write them. Give the report job "permissions: checks: write" to see a check run per lane on the Checks tab, with annotations on the suite's case lines; the comment and the commit statuses are set either way. See docs/github-actions.md.`

// suiteLines is the suite file of --suite as check run annotations name it (relative to the
// repository's root, in slashes) and the line of each of its cases; "" and nil without
// --suite, or when the suite cannot be read (told on stderr: annotations are not worth
// failing the report for).
func suiteLines(e env, ge gh.Env, path string) (string, map[string]int) {
	if path == "" {
		return "", nil
	}
	s, err := suite.Load(path)
	if err != nil {
		fmt.Fprintf(e.stderr, "check runs: no annotations on the suite file: %v\n", err)
		return "", nil
	}
	rel, err := repoPath(ge, path)
	if err != nil {
		fmt.Fprintf(e.stderr, "check runs: no annotations on the suite file: %v\n", err)
		return "", nil
	}
	lines := map[string]int{}
	for _, c := range s.Cases {
		lines[c.ID] = c.Line
	}
	return rel, lines
}

// repoPath is path relative to the repository's root (GITHUB_WORKSPACE, else the working
// folder), as GitHub names a file in an annotation.
func repoPath(ge gh.Env, path string) (string, error) {
	root := ge.Workspace
	if root == "" {
		var err error
		if root, err = os.Getwd(); err != nil {
			return "", err
		}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is outside the repository %s", path, root)
	}
	return filepath.ToSlash(rel), nil
}

// checkRuns creates a check run per lane. A refusal (403: no checks: write) is told once as
// a notice, a fork's read-only token on stderr (its own notice comes later); neither is an
// error, any other failure is.
func (p *publishing) checkRuns(ctx context.Context, e env, rep *report.Report, suitePath string, lines map[string]int) error {
	var errs []error
	for _, l := range rep.Lanes {
		run := report.LaneCheckRun(rep, l, suitePath, lines)
		cr := gh.CheckRun{Name: run.Name, HeadSHA: p.ev.HeadSHA, Conclusion: run.Conclusion, DetailsURL: p.runURL, Title: run.Title, Summary: run.Summary}
		for _, a := range run.Annotations {
			cr.Annotations = append(cr.Annotations, gh.Annotation{Path: a.Path, StartLine: a.Line, EndLine: a.Line, Level: a.Level, Title: a.Title, Message: a.Message})
		}
		_, err := p.p.CreateCheckRun(ctx, cr)
		if errors.Is(err, gh.ErrReadOnly) { // a fork's token: the read-only notice says it all
			fmt.Fprintf(e.stderr, "check runs: %v\n", err)
			return nil
		}
		if errors.Is(err, gh.ErrForbidden) {
			fmt.Fprintf(e.stderr, "check runs: %v\n", err)
			p.notice(e, checkRunsNotice)
			return nil
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// notice tells a reader of the run something that did not fail it.
func (p *publishing) notice(e env, msg string) {
	if p.env.Actions {
		e.action().Noticef("%s", msg)
		return
	}
	fmt.Fprintln(e.stderr, msg)
}

// Sizes of a failure picture in the comment: shown 270 px across (three in a row), opened at
// full size; at most 1,200 px across and 1 MiB, so that the branch stays small.
const (
	pictureMaxWidth = 1200
	pictureMaxBytes = 1 << 20
	// maxPushedPictures bounds the pictures of one run on the branch (the comment shows 12).
	maxPushedPictures = 24
	// maxPictureFile bounds a picture file read from an artifact.
	maxPictureFile = 32 << 20
)

// failurePicture is a failure picture found beside a results file.
type failurePicture struct {
	key  report.PictureKey
	file string
}

// findPictures lists the failure pictures of every request of inputs that failed a
// consistency check against its ground truth (ground truth | output | SSIM map) or against
// request 1 (consistency.repeat: request 1 | request k | SSIM map) and has one in its results
// folder (artifacts/<case>/request-<i>/), in the order of the results, at most
// maxPushedPictures.
func findPictures(inputs []checks.Input) []failurePicture {
	var out []failurePicture
	for _, in := range inputs {
		dir := filepath.Join(filepath.Dir(in.File), results.ArtifactsDir)
		for _, c := range in.Result.Cases {
			// A memory failure's timeline: of the load (request 0), then of each request.
			for _, f := range memoryPictureFiles(dir, c) {
				out = append(out, failurePicture{key: report.PictureKey{Lane: in.Result.LaneOf(c), Case: c.ID, Request: f.request, Memory: true}, file: f.file})
				if len(out) == maxPushedPictures {
					return out
				}
			}
			for _, rr := range c.Requests {
				if rr.Status != checks.Fail {
					continue
				}
				for _, kind := range []struct {
					repeat bool
					prefix string
				}{{false, pictures.FilePrefix}, {true, pictures.RepeatFilePrefix}} {
					// Case ids are checked names (validNames): a folder name, never a path.
					found, _ := filepath.Glob(filepath.Join(dir, c.ID, fmt.Sprintf("request-%d", rr.Index), kind.prefix+"*.png"))
					if len(found) == 0 {
						continue
					}
					slices.Sort(found)
					out = append(out, failurePicture{key: report.PictureKey{Lane: in.Result.LaneOf(c), Case: c.ID, Request: rr.Index, Repeat: kind.repeat}, file: found[0]})
					if len(out) == maxPushedPictures {
						return out
					}
				}
			}
		}
	}
	return out
}

// memoryPictureFile is the first memory picture of a window of a case.
type memoryPictureFile struct {
	request int // 0: the load
	file    string
}

// memoryPictureFiles lists the memory pictures of case c under dir (artifacts/): the load's
// (artifacts/<case>/load/) when a case check of the memory group failed, and each failed
// request's (artifacts/<case>/request-<i>/), the first of each by name.
func memoryPictureFiles(dir string, c checks.CaseResult) []memoryPictureFile {
	var out []memoryPictureFile
	first := func(request int, folder string) {
		found, _ := filepath.Glob(filepath.Join(dir, c.ID, folder, pictures.MemoryFilePrefix+"*.png"))
		if len(found) > 0 {
			slices.Sort(found)
			out = append(out, memoryPictureFile{request, found[0]})
		}
	}
	if memoryFailed(c.Checks) {
		first(0, results.LoadFolder)
	}
	for _, rr := range c.Requests {
		if rr.Status == checks.Fail && memoryFailed(rr.Checks) {
			first(rr.Index, fmt.Sprintf("request-%d", rr.Index))
		}
	}
	return out
}

// memoryFailed says whether a memory check among cs failed.
func memoryFailed(cs []checks.Check) bool {
	return slices.ContainsFunc(cs, func(ck checks.Check) bool {
		return ck.Status == checks.Fail && checks.KindOf(ck.Name).Group == checks.GroupMemory
	})
}

// pushPictures puts the failure pictures of inputs on the pictures branch and returns the
// URL of each for the comment. Nothing is pushed for a fork's pull request (its pictures
// come from code the pull request controls, and its token is read-only) or without a
// branch; a refusal or a failure is a notice, and the comment links to the artifacts.
func (p *publishing) pushPictures(ctx context.Context, e env, t gh.Event, branch string, inputs []checks.Input, now time.Time) map[report.PictureKey]string {
	found := findPictures(inputs)
	if len(found) == 0 || branch == "" {
		return nil
	}
	if t.FromFork() {
		p.notice(e, fmt.Sprintf("diffusion-check did not upload %d failure pictures: the pull request comes from the fork %s, whose pictures are its own code's output; the comment links to the run's artifacts instead.", len(found), t.HeadRepo))
		return nil
	}
	var files []gh.Asset
	var keys []report.PictureKey
	for _, f := range found {
		data, err := inputfile.Read(ctx, f.file, maxPictureFile)
		if err == nil {
			data, err = pictures.Shrink(data, pictureMaxWidth, pictureMaxBytes)
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "pictures: %s: %v\n", f.file, err)
			continue
		}
		name := fmt.Sprintf("%s/%s/request-%d.png", f.key.Lane, f.key.Case, f.key.Request)
		switch {
		case f.key.Repeat:
			name = fmt.Sprintf("%s/%s/request-%d-vs-request-1.png", f.key.Lane, f.key.Case, f.key.Request)
		case f.key.Memory && f.key.Request == 0:
			name = fmt.Sprintf("%s/%s/load-memory.png", f.key.Lane, f.key.Case)
		case f.key.Memory:
			name = fmt.Sprintf("%s/%s/request-%d-memory.png", f.key.Lane, f.key.Case, f.key.Request)
		}
		files = append(files, gh.Asset{Path: name, Data: data})
		keys = append(keys, f.key)
	}
	if len(files) == 0 {
		return nil
	}
	folder := gh.RunFolder(now, p.env.RunID, p.env.RunAttempt)
	paths, err := p.p.PushAssets(ctx, branch, folder, files, gh.DefaultRetention, now)
	if err != nil {
		fmt.Fprintf(e.stderr, "pictures: %v\n", err)
		why := "GitHub failed the push: see the log"
		if errors.Is(err, gh.ErrForbidden) || errors.Is(err, gh.ErrReadOnly) {
			why = `the token may not write the branch: give the report job "permissions: contents: write"`
		}
		p.notice(e, fmt.Sprintf("diffusion-check did not upload %d failure pictures to the branch %s (%s); the comment links to the run's artifacts instead. See docs/github-actions.md.", len(files), branch, why))
		return nil
	}
	urls := map[report.PictureKey]string{}
	for i, path := range paths {
		urls[keys[i]] = p.p.AssetURL(p.env.ServerURL, branch, path)
	}
	fmt.Fprintf(e.stderr, "pictures: %d on branch %s, folder %s\n", len(paths), branch, folder)
	return urls
}
