package compare

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/internal/kernel"
	"github.com/diffusion-check/diffusion-check/internal/media/mediatest"
)

// proofResults is what the child process of TestUnprovenConversionIsDecodedAgain reports.
type proofResults struct {
	Videos, Kept Result
	Each         []Result
	Frames       int
	Errors       []string
}

// TestUnprovenConversionIsDecodedAgain: when a decode's proof fails (ffmpeg's own rgb24 of
// frame 0 is not what converting its yuv420p frame here gives), the comparison decodes the files
// again through ffmpeg's rgb24 and gives exactly the results of a decode whose proof holds:
// for one pair, for the runner's output check with its kept frames, and for several outputs in
// one pass. The failing proof comes from an ffmpeg wrapper that inverts the proof's frame;
// the test runs in a child process, because the verdict it leaves is the process's.
func TestUnprovenConversionIsDecodedAgain(t *testing.T) {
	t.Parallel() // its own files; the package keeps no state between calls
	mediatest.NeedFFmpeg(t)
	if dir := os.Getenv("COMPARE_PROOF_CHILD"); dir != "" {
		proofChild(t, dir)
		return
	}
	w, h, n := 64, 48, 9
	gt := video(t, "gt.mp4", w, h, n, nil)
	outs := []string{video(t, "o1.mp4", w, h, n, map[int]bool{2: true}), video(t, "o2.mp4", w, h, n, map[int]bool{6: true})}
	want := proofRun(t, gt, outs)

	dir := t.TempDir()
	// The wrapper logs its arguments and negates the frame it writes on pipe:3.
	bin := mediatest.ProofWrapper(t, filepath.Join(dir, "log"), "-vf", "negate")
	in, _ := json.Marshal(append([]string{gt}, outs...))
	if err := os.WriteFile(filepath.Join(dir, "in.json"), in, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestUnprovenConversionIsDecodedAgain$")
	cmd.Env = append(os.Environ(), "COMPARE_PROOF_CHILD="+dir, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "out.gob"))
	if err != nil {
		t.Fatal(err)
	}
	var got proofResults
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("after a failed proof (-proven +decoded again):\n%s", d)
	}
	log, err := os.ReadFile(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	if kernel.Selected() == kernel.Portable {
		return // no yuv420p path: nothing to prove
	}
	var proofs, rgb, yuvAfter int
	for line := range strings.SplitSeq(string(log), "\n") {
		if strings.Contains(line, "yuv420p pipe:1") && strings.Contains(line, "pipe:3") {
			proofs++
			if rgb > 0 {
				yuvAfter++
			}
		}
		if strings.Contains(line, "rgb24 pipe:1") {
			rgb++
		}
	}
	// Once a proof failed, no yuv420p decoder is started early only to be stopped.
	if yuvAfter > 0 {
		t.Errorf("%d yuv420p decoders started after the first rgb24 one:\n%s", yuvAfter, log)
	}
	// The first decode proves (and fails); every decode after it takes rgb24.
	if proofs == 0 || rgb < 2 {
		t.Errorf("decodes with a proof: %d, through rgb24: %d; want some of each:\n%s", proofs, rgb, log)
	}
}

// proofChild runs the comparisons of TestUnprovenConversionIsDecodedAgain with the wrapper
// first on PATH and writes what they gave to dir/out.gob.
func proofChild(t *testing.T, dir string) {
	data, err := os.ReadFile(filepath.Join(dir, "in.json"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	if err := json.Unmarshal(data, &files); err != nil {
		t.Fatal(err)
	}
	got := proofRun(t, files[0], files[1:])
	// gob, not JSON: a PSNR may be +Inf.
	var out bytes.Buffer
	if err := gob.NewEncoder(&out).Encode(got); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "out.gob"), out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// proofRun makes the comparisons of TestUnprovenConversionIsDecodedAgain: one pair, the
// runner's output check and then the pair from its kept frames, and every output in one pass.
func proofRun(t *testing.T, gt string, outs []string) proofResults {
	t.Helper()
	var res proofResults
	var err error
	if res.Videos, err = Videos(t.Context(), gt, outs[0]); err != nil {
		t.Fatal(err)
	}
	c := NewCache(DefaultCacheBytes, Helpers{})
	info, err := c.Output(t.Context(), outs[0])
	if err != nil {
		t.Fatal(err)
	}
	res.Frames = info.Frames
	if res.Kept, err = c.Videos(t.Context(), gt, outs[0]); err != nil {
		t.Fatal(err)
	}
	var errs []error
	res.Each, errs = uncached.VideosEach(t.Context(), gt, outs)
	for _, err := range errs {
		res.Errors = append(res.Errors, errText(err))
	}
	return res
}
