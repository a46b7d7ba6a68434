package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
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

// findPictures lists the failure pictures of inputs that a comment shows, as their records
// name them (results.Picture), never by looking in the folders: for each failed request the
// first consistency picture (ground truth | output | SSIM map) and the first repeat picture
// (request 1 | request k | SSIM map), and the first memory picture of each window whose
// memory check failed (the load's, then each request's), at most maxPushedPictures. A path
// that is not one of its output folder's artifacts (the record is the pull request's to
// write) is left out, and said in log.
func findPictures(inputs []results.Input, log io.Writer) []failurePicture {
	var out []failurePicture
	add := func(in results.Input, key report.PictureKey, pics []results.Picture, kind string) bool {
		p, ok := results.PictureOf(pics, kind)
		if !ok {
			return false
		}
		file, err := results.ArtifactFile(filepath.Dir(in.File), p.Path)
		if err != nil {
			fmt.Fprintf(log, "pictures: %s: case %s: %v\n", in.File, key.Case, err)
			return false
		}
		out = append(out, failurePicture{key: key, file: file})
		return len(out) == maxPushedPictures
	}
	for _, in := range inputs {
		for _, c := range in.Result.Cases {
			lane := in.Result.LaneOf(c)
			// A memory failure's timeline: of the load (request 0), then of each request.
			if c.Load != nil && memoryFailed(c.Checks) && add(in, report.PictureKey{Lane: lane, Case: c.ID, Memory: true}, c.Load.Pictures, results.PictureMemory) {
				return out
			}
			for _, rr := range c.Requests {
				if rr.Status == results.Fail && memoryFailed(rr.Checks) &&
					add(in, report.PictureKey{Lane: lane, Case: c.ID, Request: rr.Index, Memory: true}, rr.Pictures, results.PictureMemory) {
					return out
				}
			}
			for _, rr := range c.Requests {
				if rr.Status != results.Fail {
					continue
				}
				if add(in, report.PictureKey{Lane: lane, Case: c.ID, Request: rr.Index}, rr.Pictures, results.PictureConsistency) ||
					add(in, report.PictureKey{Lane: lane, Case: c.ID, Request: rr.Index, Repeat: true}, rr.Pictures, results.PictureRepeat) {
					return out
				}
			}
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
	found := findPictures(inputs, p.opts.Log)
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
		// Named on the branch after the request's artifact folder.
		base := f.key.Lane + "/" + f.key.Case + "/" + results.RequestFolder(f.key.Request)
		name := base + ".png"
		switch {
		case f.key.Repeat:
			name = base + "-vs-" + results.RequestFolder(1) + ".png"
		case f.key.Memory && f.key.Request == 0:
			name = f.key.Lane + "/" + f.key.Case + "/" + results.LoadFolder + "-memory.png"
		case f.key.Memory:
			name = base + "-memory.png"
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
