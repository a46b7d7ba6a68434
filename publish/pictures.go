package publish

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/gh"
	"github.com/diffusion-check/diffusion-check/internal/inputfile"
	"github.com/diffusion-check/diffusion-check/internal/pictures"
	"github.com/diffusion-check/diffusion-check/report"
	"github.com/diffusion-check/diffusion-check/results"
)

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
func findPictures(inputs []results.Input) []failurePicture {
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
				if rr.Status != results.Fail {
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
func memoryPictureFiles(dir string, c results.CaseResult) []memoryPictureFile {
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
		if rr.Status == results.Fail && memoryFailed(rr.Checks) {
			first(rr.Index, fmt.Sprintf("request-%d", rr.Index))
		}
	}
	return out
}

// memoryFailed says whether a memory check among cs failed.
func memoryFailed(cs []results.Check) bool {
	return slices.ContainsFunc(cs, func(ck results.Check) bool {
		return ck.Status == results.Fail && checks.KindOf(ck.Name).Group == checks.GroupMemory
	})
}

// pushPictures puts the failure pictures of inputs on the pictures branch and returns the
// URL of each for the comment. Nothing is pushed for a fork's pull request (its pictures
// come from code the pull request controls, and its token is read-only) or without a
// branch; a refusal or a failure is a notice, and the comment links to the artifacts.
func (p *publisher) pushPictures(ctx context.Context, inputs []results.Input) map[report.PictureKey]string {
	found := findPictures(inputs)
	branch, t, log := p.opts.PicturesBranch, p.opts.Event, p.opts.Log
	if len(found) == 0 || branch == "" {
		return nil
	}
	if t.FromFork() {
		p.opts.Run.Notice(fmt.Sprintf("diffusion-check did not upload %d failure pictures: the pull request comes from the fork %s, whose pictures are its own "+
			"code's output; the comment links to the run's artifacts instead.", len(found), t.HeadRepo))
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
			fmt.Fprintf(log, "pictures: %s: %v\n", f.file, err)
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
	env := p.opts.Env
	folder := gh.RunFolder(p.opts.Now, env.RunID, env.RunAttempt)
	paths, err := p.c.PushAssets(ctx, branch, folder, files, gh.DefaultRetention, p.opts.Now)
	if err != nil {
		fmt.Fprintf(log, "pictures: %v\n", err)
		why := "GitHub failed the push: see the log"
		if errors.Is(err, gh.ErrForbidden) || errors.Is(err, gh.ErrReadOnly) {
			why = `the token may not write the branch: give the report job "permissions: contents: write"`
		}
		p.opts.Run.Notice(fmt.Sprintf("diffusion-check did not upload %d failure pictures to the branch %s (%s); the comment links to the run's artifacts "+
			"instead. See docs/github-actions.md.", len(files), branch, why))
		return nil
	}
	urls := map[report.PictureKey]string{}
	for i, path := range paths {
		urls[keys[i]] = p.c.AssetURL(env.ServerURL, branch, path)
	}
	fmt.Fprintf(log, "pictures: %d on branch %s, folder %s\n", len(paths), branch, folder)
	return urls
}
