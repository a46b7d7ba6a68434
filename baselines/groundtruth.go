package baselines

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/diffusion-check/diffusion-check/internal/inputfile"
)

// GroundTruth is a folder of ground-truth media named as SGLang's CI names them:
//
//	{id}_{n}gpu.{png|jpg|webp}                       an image case
//	{id}_{n}gpu_frame_0.png, _frame_mid.png, _frame_last.png   key frames 0, N//2, N−1 of a video
//
//	{id}_{n}gpu_audio.wav                            the audio track of a video+audio case
//
// plus diffusion-check's whole-video ground truth {id}_{n}gpu.mp4 (every frame). n is the
// case's GPU count and id the case id, or its ground-truth alias (gtAlias). As in SGLang's
// store, a platform subfolder ({Platform}/, e.g. 5090/) holds the ground truth of one
// consistency platform and is looked in first. The audio ground truth is SGLang's alone
// (_audio_consistency_gt_filenames, test_utils.py): 16-bit mono PCM at 16 kHz, whatever holds
// the pictures.
type GroundTruth struct {
	Dir string
	// Platform is SGLang's consistency platform of the run (ConsistencyPlatform): h100, b200
	// or 5090; empty looks in Dir only.
	Platform string
}

// gtAliases is SGLang's CONSISTENCY_GT_CASE_ALIASES (test_utils.py @ a7ec6b97f786): cases
// that share the ground truth of another case.
var gtAliases = map[string]string{
	"fsdp-inference": "zimage_image_t2i_2_gpus",
}

// gtAlias is the case id whose ground-truth files case caseID uses: its alias in SGLang's
// table, else itself (get_consistency_gt_case_id).
func gtAlias(caseID string) string {
	if a, ok := gtAliases[caseID]; ok {
		return a
	}
	return caseID
}

// consistencyPlatform is SGLang's consistency platform of a GPU class
// (get_consistency_platform, test_utils.py @ a7ec6b97f786): 5090 for an sm120 GPU, b200 for a
// Blackwell one, and h100 for every other GPU, AMD included. A platform name or alias
// (cudaAliases) is itself; a CUDA class is its compute capability's platform.
func consistencyPlatform(gpuClass string) string {
	if p, ok := PlatformConsistency.normalizePlatform(gpuClass); ok {
		return p
	}
	if major, ok := capabilityOf(gpuClass); ok {
		return platformOfCapability(major)
	}
	return "h100"
}

// The kinds of ground truth Lookup finds.
const (
	GTImage     = "image"
	GTVideo     = "video"      // a whole MP4
	GTKeyFrames = "key_frames" // SGLang's three PNGs
	gtAudio     = "audio"      // SGLang's {stem}_audio.wav
)

// GTEntry is the ground truth found for a case.
type GTEntry struct {
	Kind string
	// Path is the image, the whole video or the audio; empty for key frames.
	Path string
	// Name is the file (key frames: the three, in braces) relative to the ground-truth folder,
	// as the request's note names it: "sglang_generated/h100/x_1gpu_frame_{0,mid,last}.png".
	Name string
	// KeyFrames are the paths of frame_0, frame_mid and frame_last, for GTKeyFrames.
	KeyFrames [3]string
	// Source is the store's source the ground truth came from: gtOfficial (made by the
	// reference implementation), gtSGLang (made by SGLang), or "" for a plain folder.
	Source string
}

// NotFoundError says that a case has no ground truth, which names were looked for (one entry
// per folder, alternatives in braces) and which sets of key frames were incomplete.
type NotFoundError struct {
	Dir        string
	Tried      []string
	Incomplete []string
}

func (e *NotFoundError) Error() string {
	var at []string
	for _, t := range e.Tried {
		at = append(at, filepath.Join(e.Dir, t))
	}
	s := "no ground truth at " + strings.Join(at, " or ")
	if len(e.Incomplete) > 0 {
		s += " (" + strings.Join(e.Incomplete, "; ") + ")"
	}
	return s
}

// braces writes names sharing a stem as stem{a,b,c}: "x_1gpu.{png,jpg,webp}".
func braces(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	stem := names[0]
	for _, n := range names[1:] {
		for !strings.HasPrefix(n, stem) {
			stem = stem[:len(stem)-1]
		}
	}
	// Cut back to a separator so that the alternatives read as whole suffixes, unless every
	// alternative already starts with one.
	atSep := true
	for _, n := range names {
		atSep = atSep && len(n) > len(stem) && strings.ContainsRune("._", rune(n[len(stem)]))
	}
	if i := strings.LastIndexAny(stem, "._"); !atSep && i >= 0 {
		stem = stem[:i+1]
	}
	var alts []string
	for _, n := range names {
		alts = append(alts, strings.TrimPrefix(n, stem))
	}
	return stem + "{" + strings.Join(alts, ",") + "}"
}

// Stem is the common part of a case's ground-truth names: {id}_{n}gpu, with id the case's
// ground-truth alias (gtAlias).
func Stem(caseID string, numGPUs int) string {
	return fmt.Sprintf("%s_%dgpu", gtAlias(caseID), max(numGPUs, 1))
}

// imageExt maps an output format onto SGLang's ground-truth extension: jpeg → jpg; png and
// webp as they are; anything else (or nothing: SGLang's default format) → jpg.
func imageExt(format string) string {
	switch f := strings.ToLower(format); f {
	case "png", "webp", "jpg":
		return f
	}
	return "jpg"
}

// ImageName is the ground-truth file name of an image case.
func ImageName(caseID string, numGPUs int, format string) string {
	return Stem(caseID, numGPUs) + "." + imageExt(format)
}

// VideoName is the whole-video ground-truth file name of a video case.
func VideoName(caseID string, numGPUs int) string { return Stem(caseID, numGPUs) + ".mp4" }

// KeyFrameNames are SGLang's key-frame file names of a video case: frames 0, N//2 and N−1.
func KeyFrameNames(caseID string, numGPUs int) [3]string {
	s := Stem(caseID, numGPUs)
	return [3]string{s + "_frame_0.png", s + "_frame_mid.png", s + "_frame_last.png"}
}

// AudioName is SGLang's audio ground-truth file name of a video+audio case.
func AudioName(caseID string, numGPUs int) string { return Stem(caseID, numGPUs) + "_audio.wav" }

// KeyFrameIndices are the frame indices SGLang's key frames hold in a video of n frames.
func KeyFrameIndices(n int) [3]int { return [3]int{0, n / 2, n - 1} }

// Path is the path of a ground-truth file name in the store.
func (g GroundTruth) Path(name string) string { return filepath.Join(g.Dir, name) }

// gtFolder is one folder Lookup looks in: its prefix of the names, the store source it
// belongs to (gtOfficial, gtSGLang, or "" in a plain folder), the candidate set's prefix inside
// the source ("h100/" in a platform folder, "" at the source's root), and, for the official
// source, the outputs case_map.json declares for the case (only those count).
type gtFolder struct {
	prefix, source, set string
	declared            map[string]bool
}

// has reports whether the folder may hold name: every name, or only a declared one. As SGLang's
// _official_consistency_gt_candidate_is_declared, an output declares the candidate's name inside
// the source ("h100/x_1gpu.png") or its base name ("x_1gpu.png").
func (f gtFolder) has(name string) bool {
	if f.declared == nil {
		return true
	}
	base := path.Base(name)
	return f.declared[f.set+base] || f.declared[base]
}

// folders are the folders Lookup looks in, in SGLang's order (_find_remote_consistency_gt_files):
// the candidate sets outside (get_consistency_gt_candidate_sets: the platform subfolder, then the
// root), the store's sources inside (sources: official_generated, then sglang_generated). So a
// store is read official/h100 → sglang/h100 → official/ → sglang/, and a plain folder h100/ → /.
// A case whose id holds "npu" (an Ascend case) has no platform subfolder, as in SGLang.
func (g GroundTruth) folders(caseID string) ([]gtFolder, error) {
	srcs, err := g.sources(caseID)
	if err != nil {
		return nil, err
	}
	if g.Platform == "" || ascendCase(caseID) {
		return srcs, nil
	}
	out := make([]gtFolder, 0, 2*len(srcs))
	for _, s := range srcs {
		s.set = g.Platform + "/"
		s.prefix += s.set
		out = append(out, s)
	}
	return append(out, srcs...), nil
}

// ascendCase reports whether a case is an Ascend (NPU) case, as SGLang's
// _is_ascend_consistency_case tells it: "npu" in its raw id.
func ascendCase(caseID string) bool { return strings.Contains(caseID, "npu") }

// Lookup finds the ground truth of a case in each folder (folders: the platform subfolder of
// every source, then every source's root) in turn. An image case takes the first of
// {stem}.{ext of format}, .png, .jpg, .webp that exists (SGLang's order). A video case takes the whole video {stem}.mp4 when it
// exists, else the three key frames when all three exist: a folder with only some of them is
// passed over, as SGLang passes over an incomplete candidate set. Nothing found is a
// *NotFoundError naming every name tried and every incomplete set.
func (g GroundTruth) Lookup(caseID string, numGPUs int, video bool, format string) (GTEntry, error) {
	nf := &NotFoundError{Dir: g.Dir}
	folders, err := g.folders(caseID)
	if err != nil {
		return GTEntry{}, err
	}
	for _, f := range folders {
		dir := f.prefix
		stem := dir + Stem(caseID, numGPUs)
		if !video {
			pref := imageExt(format)
			tried := []string{stem + "." + pref}
			for _, e := range []string{"png", "jpg", "webp"} {
				if e != pref {
					tried = append(tried, stem+"."+e)
				}
			}
			for _, name := range tried {
				ok, err := g.exists(name)
				if err != nil {
					return GTEntry{}, err
				}
				if ok && f.has(name) {
					return GTEntry{Kind: GTImage, Path: g.Path(name), Name: name, Source: f.source}, nil
				}
			}
			nf.Tried = append(nf.Tried, braces(tried))
			continue
		}
		whole := stem + ".mp4"
		ok, err := g.exists(whole)
		if err != nil {
			return GTEntry{}, err
		}
		if ok && f.has(whole) {
			return GTEntry{Kind: GTVideo, Path: g.Path(whole), Name: whole, Source: f.source}, nil
		}
		names := KeyFrameNames(caseID, numGPUs)
		e := GTEntry{Kind: GTKeyFrames, Source: f.source, Name: braces([]string{dir + names[0], dir + names[1], dir + names[2]})}
		var missing []string
		for i, name := range names {
			name = dir + name
			ok, err := g.exists(name)
			if err != nil {
				return GTEntry{}, err
			}
			if !ok || !f.has(name) {
				missing = append(missing, name)
			}
			e.KeyFrames[i] = g.Path(name)
		}
		if len(missing) == 0 {
			return e, nil
		}
		nf.Tried = append(nf.Tried, braces([]string{whole, dir + names[0], dir + names[1], dir + names[2]}))
		if len(missing) < len(names) {
			nf.Incomplete = append(nf.Incomplete, fmt.Sprintf("key frames %s missing", strings.Join(missing, ", ")))
		}
	}
	return GTEntry{}, nf
}

// LookupAudio finds the audio ground truth of a video+audio case, {stem}_audio.wav, beside the
// pictures' ground truth, in the folders and order of Lookup, as SGLang's
// _find_remote_audio_consistency_gt_files orders them (get_audio_consistency_gt_candidate_sets
// outside, _remote_consistency_gt_base_urls inside). Nothing found is a *NotFoundError naming
// every name tried.
func (g GroundTruth) LookupAudio(caseID string, numGPUs int) (GTEntry, error) {
	nf := &NotFoundError{Dir: g.Dir}
	folders, err := g.folders(caseID)
	if err != nil {
		return GTEntry{}, err
	}
	for _, f := range folders {
		name := f.prefix + AudioName(caseID, numGPUs)
		nf.Tried = append(nf.Tried, name)
		if !f.has(name) {
			continue
		}
		ok, err := g.exists(name)
		if err != nil {
			return GTEntry{}, fmt.Errorf("audio %w", err)
		}
		if ok {
			return GTEntry{Kind: gtAudio, Path: g.Path(name), Name: name, Source: f.source}, nil
		}
	}
	return GTEntry{}, nf
}

// exists reports whether the ground-truth file name is in the store; a folder of that name or
// a failed stat is an error.
func (g GroundTruth) exists(name string) (bool, error) {
	// A pull request can put anything in a ground-truth folder of its checkout: a link to a
	// picture elsewhere on the runner, a FIFO, a device. None is read (inputfile.Find).
	ok, err := inputfile.Find(g.Dir, name)
	if err != nil {
		return false, fmt.Errorf("ground truth: %w", err)
	}
	return ok, nil
}

// Put states of a ground-truth file.
const (
	putNew       = "new"
	PutChanged   = "changed"
	putUnchanged = "unchanged"
)

// Put writes data as the ground-truth file name, atomically (a reader sees the old file or the
// new one), creating the folder if needed. It returns PutNew, PutChanged (an existing file with
// other bytes was replaced) or putUnchanged (the same bytes were there: nothing is written).
func (g GroundTruth) Put(name string, data []byte) (string, error) {
	dst := g.Path(name)
	old, err := os.ReadFile(dst)
	state := PutChanged
	switch {
	case errors.Is(err, fs.ErrNotExist):
		state = putNew
	case err != nil:
		return "", fmt.Errorf("ground truth %s: %w", dst, err)
	case bytes.Equal(old, data):
		return putUnchanged, nil
	}
	if err := os.MkdirAll(g.Dir, 0o755); err != nil {
		return "", fmt.Errorf("ground truth: %w", err)
	}
	tmp, err := os.CreateTemp(g.Dir, "."+name+".*")
	if err != nil {
		return "", fmt.Errorf("ground truth %s: %w", dst, err)
	}
	_, werr := tmp.Write(data)
	if werr == nil {
		werr = tmp.Chmod(0o644) // CreateTemp makes it 0600; ground truth is shared data
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), dst)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("ground truth %s: %w", dst, werr)
	}
	return state, nil
}
