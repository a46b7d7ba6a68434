package refserver

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/internal/media/mediatest"
)

var small = map[string]any{"prompt": "a quiet harbour", "size": "96x96", "seed": 3, "num_inference_steps": 4}

func TestFaultDrift(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	ts := start(t, Config{Faults: faults(t, "drift-after=1")})
	clean := ts.image(t, small).media[0]
	drifted := ts.image(t, small).media[0]
	a, w, h := rgbOf(decodePNG(t, clean))
	b, _, _ := rgbOf(decodePNG(t, drifted))
	s := ssim(a, b, w, h)
	t.Logf("SSIM clean vs drifted: %.3f", s)
	if s >= 0.8 {
		t.Errorf("SSIM of the drifted output %.3f, want clearly below 0.9", s)
	}
	if sd := stddev(b); sd < 20 {
		t.Errorf("drifted output is flat (stddev %.1f), want a plausible image", sd)
	}
	// A fresh healthy server gives request 2 the clean output: drift is the fault, not the count.
	if again := start(t, Config{}).image(t, small).media[0]; !bytes.Equal(clean, again) {
		t.Error("a healthy server's output differs from request 1's")
	}
	v := map[string]any{"prompt": "p", "size": "64x48", "num_frames": 4, "seed": 1}
	_, vd := ts.video(t, v)
	_, vc := start(t, Config{}).video(t, v)
	if s := ssim(frames(t, vd, 64, 48)[2], frames(t, vc, 64, 48)[2], 64, 48); s >= 0.8 {
		t.Errorf("drifted video frame SSIM %.3f, want clearly below 0.9", s)
	}
}

func TestFaultSlow(t *testing.T) {
	// Computed timing: the planned step times, whatever the load (TestTimingReportsClockOrPlan
	// shows that the sleeps are as long).
	ts := start(t, Config{StepMs: 5, Timing: TimingComputed, Faults: faults(t, "slow-after=1:10")})
	body := map[string]any{"prompt": "p", "size": "16x16", "num_inference_steps": 6}
	ts.image(t, body)
	ts.image(t, body)
	ts.image(t, body)
	recs := waitRecords(t, ts.dir, 3)
	if got := []float64{meanStep(recs[0]), meanStep(recs[1]), meanStep(recs[2])}; !slices.Equal(got, []float64{5, 50, 50}) {
		t.Errorf("mean steps %v ms, want [5 50 50] (10× after request 1)", got)
	}
}

// meanStep is the mean denoise step of a record, leaving out the first (a warm-up).
func meanStep(r perfRecord) float64 {
	var s float64
	for _, v := range r.Steps[1:] {
		s += v
	}
	return s / float64(len(r.Steps)-1)
}

// TestFaultSlowAt checks that slow-at slows request K only: the requests before and after
// it run at the normal pace.
func TestFaultSlowAt(t *testing.T) {
	ts := start(t, Config{StepMs: 5, Timing: TimingComputed, Faults: faults(t, "slow-at=2:10")})
	body := map[string]any{"prompt": "p", "size": "16x16", "num_inference_steps": 6}
	for range 3 {
		ts.image(t, body)
	}
	recs := waitRecords(t, ts.dir, 3)
	if got := []float64{meanStep(recs[0]), meanStep(recs[1]), meanStep(recs[2])}; !slices.Equal(got, []float64{5, 50, 5}) {
		t.Errorf("mean steps %v ms, want [5 50 5] (request 2 only 10×)", got)
	}
}

func TestFaultMemGrow(t *testing.T) {
	ts := start(t, Config{Faults: faults(t, "mem-grow=100")})
	var peaks []float64
	for range 3 {
		peaks = append(peaks, ts.image(t, small).PeakMemoryMB)
	}
	if peaks[1]-peaks[0] != 100 || peaks[2]-peaks[1] != 100 {
		t.Errorf("peaks %v, want +100 MiB per request", peaks)
	}
	recs := waitRecords(t, ts.dir, 3)
	for i, r := range recs {
		if r.MemorySnapshots.RuntimePeak.PeakReservedMB != peaks[i] || r.MemorySnapshots.LoadPeak.PeakReservedMB != loadReservedMiB {
			t.Errorf("record %d memory %+v, want runtime %.1f", i, r.MemorySnapshots, peaks[i])
		}
	}
	// Without the fault memory is a function of the request only.
	h := start(t, Config{})
	if a, b := h.image(t, small).PeakMemoryMB, h.image(t, small).PeakMemoryMB; a != b || a != peaks[0] {
		t.Errorf("healthy peaks %v, %v, want %v twice", a, b, peaks[0])
	}
}

// TestFaultMemSpikeAt: only request 2 reports a runtime peak 64 MiB higher, in its response
// and its record (and holds that much host memory meanwhile: memory_timeline.txtar).
func TestFaultMemSpikeAt(t *testing.T) {
	ts := start(t, Config{Faults: faults(t, "mem-spike-at=2:64")})
	var peaks []float64
	for range 3 {
		peaks = append(peaks, ts.image(t, small).PeakMemoryMB)
	}
	if peaks[1]-peaks[0] != 64 || peaks[2] != peaks[0] {
		t.Errorf("peaks %v, want request 2 alone 64 MiB higher", peaks)
	}
	recs := waitRecords(t, ts.dir, 3)
	for i, r := range recs {
		if r.MemorySnapshots.RuntimePeak.PeakReservedMB != peaks[i] {
			t.Errorf("record %d memory %+v, want runtime %.1f", i, r.MemorySnapshots, peaks[i])
		}
	}
}

func TestFaultCrashImage(t *testing.T) {
	ts := start(t, Config{Faults: faults(t, "crash-at=2")})
	ts.image(t, small)
	resp, err := ts.Client().Post(ts.URL+"/v1/images/generations", "application/json", strings.NewReader(`{"prompt": "x", "size": "32x32"}`))
	if err == nil {
		resp.Body.Close()
		t.Fatalf("request 2 answered %d, want the connection to die", resp.StatusCode)
	}
	if got := ts.exit.calls(); len(got) != 1 || got[0] != 139 {
		t.Errorf("exit calls %v, want [139]", got)
	}
	log := ts.log.String()
	if !strings.Contains(log, "Fatal Python error: Segmentation fault") {
		t.Errorf("log lacks the crash line:\n%s", log)
	}
	select {
	case <-ts.h.Crashed():
	default:
		t.Error("Crashed() not closed")
	}
	if resp, err := ts.Client().Get(ts.URL + "/health"); err == nil {
		resp.Body.Close()
		t.Error("a crashed server still answers /health")
	}
	waitRecords(t, ts.dir, 1) // request 1's; none for the crashed request
}

func TestFaultCrashVideo(t *testing.T) {
	ts := start(t, Config{Faults: faults(t, "crash-at=1")})
	st, b := ts.postJSON(t, "/v1/videos", map[string]any{"prompt": "p", "size": "32x32", "num_frames": 2})
	j := decodeJob(t, st, b)
	deadline := time.Now().Add(5 * time.Second)
	for len(ts.exit.calls()) == 0 && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
	if got := ts.exit.calls(); len(got) != 1 || got[0] != 139 {
		t.Fatalf("exit calls %v, want [139]", got)
	}
	if got, _ := ts.h.job(j.ID); got.Status != "queued" || got.Progress != 0 {
		t.Errorf("crashed job is %s at %d%%, want queued at 0%% (SGLang has no in-progress status)", got.Status, got.Progress)
	}
}

func TestFaultHangImage(t *testing.T) {
	ts := start(t, Config{Faults: faults(t, "hang-at=1")})
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/v1/images/generations", strings.NewReader(`{"prompt": "x", "size": "32x32"}`))
	resp, err := ts.Client().Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("hung request answered %d", resp.StatusCode)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the client's deadline", err)
	}
	ts.image(t, small) // request 2 is fine
	// Close aborts a generation that is still running (request 3, once it has begun).
	go func() {
		resp, err := ts.Client().Post(ts.URL+"/v1/images/generations", "application/json", strings.NewReader(`{"prompt": "x"}`))
		if err == nil {
			resp.Body.Close()
		}
	}()
	waitLog(t, ts.log, "#3] image 512x512")
	done := make(chan struct{})
	go func() { ts.h.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(eventTimeout):
		t.Fatal("Close blocked")
	}
}

func TestFaultHangVideo(t *testing.T) {
	ts := start(t, Config{Faults: faults(t, "hang-at=1")})
	st, b := ts.postJSON(t, "/v1/videos", map[string]any{"prompt": "p", "size": "32x32", "num_frames": 2, "num_inference_steps": 4})
	j := decodeJob(t, st, b)
	waitLog(t, ts.log, "denoising step 3/4 is taking long")
	if j = ts.wait(t, j.ID, 0); j.Status != "queued" || j.Progress != 0 {
		t.Errorf("hung job %+v, want queued at 0%% (SGLang has no in-progress status)", j)
	}
	if st, _ := ts.call(t, http.MethodGet, "/v1/videos/"+j.ID+"/content", "", nil); st != http.StatusNotFound {
		t.Errorf("content of a hung job: %d, want 404", st)
	}
	if strings.Contains(ts.log.String(), "done in") {
		t.Error("the hung job finished")
	}
}

func TestFaultCorrupt(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	ts := start(t, Config{Faults: faults(t, "corrupt-at=1")})
	bad := ts.image(t, small).media[0]
	good := ts.image(t, small).media[0]
	if len(bad) != len(good)/2 || !bytes.Equal(bad, good[:len(bad)]) {
		t.Errorf("corrupt image is %d bytes, want the first half (%d) of %d", len(bad), len(good)/2, len(good))
	}
	if _, err := probeBytes(t, "bad.png", bad); !errors.Is(err, media.ErrTruncated) {
		t.Errorf("probe of the corrupt PNG: %v, want ErrTruncated", err)
	}

	ts = start(t, Config{Faults: faults(t, "corrupt-at=1")})
	v := map[string]any{"prompt": "p", "size": "64x48", "num_frames": 8, "generate_audio": true}
	_, badMP4 := ts.video(t, v)
	_, goodMP4 := ts.video(t, v)
	if len(badMP4) != len(goodMP4)/2 {
		t.Errorf("corrupt video %d bytes, want %d", len(badMP4), len(goodMP4)/2)
	}
	_, err := probeBytes(t, "bad.mp4", badMP4)
	if err == nil {
		t.Error("probe of the corrupt MP4 succeeded")
	}
	t.Logf("probe: %v", err)
}

func TestFaultEmpty(t *testing.T) {
	ts := start(t, Config{Faults: faults(t, "empty-at=1")})
	st, b := ts.postJSON(t, "/v1/images/generations", small)
	r := decodeImageReply(t, st, b)
	if len(r.media) != 1 || len(r.media[0]) != 0 || !strings.Contains(string(b), `"b64_json":""`) {
		t.Errorf("empty-at image reply %s", b)
	}
	job, mp4 := ts.video(t, map[string]any{"prompt": "p", "size": "32x32", "num_frames": 2})
	if job.Status != "completed" || len(mp4) == 0 {
		t.Errorf("request 2 (healthy): %d bytes", len(mp4))
	}
	ts = start(t, Config{Faults: faults(t, "empty-at=1")})
	if _, mp4 := ts.video(t, map[string]any{"prompt": "p", "size": "32x32", "num_frames": 2}); len(mp4) != 0 {
		t.Errorf("empty-at video has %d bytes", len(mp4))
	}
	if _, err := probeBytes(t, "empty.mp4", nil); err == nil || !strings.Contains(err.Error(), "empty file") {
		t.Errorf("probe of an empty file: %v", err)
	}
}

func TestFaultNoPerfRecord(t *testing.T) {
	ts := start(t, Config{Faults: faults(t, "no-perf-record")})
	ts.image(t, small)
	ts.h.Close()
	if _, err := os.Stat(filepath.Join(ts.dir, PerfLogName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("performance.log exists (%v), want none", err)
	}
}

// TestFaultDriftAtChangesOneRequestOnly checks that drift-at=2 perturbs request 2's output
// alone: requests 1 and 3 are the clean output, byte for byte.
func TestFaultDriftAtChangesOneRequestOnly(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	ts := start(t, Config{Faults: faults(t, "drift-at=2")})
	var out [][]byte
	for range 3 {
		out = append(out, ts.image(t, small).media[0])
	}
	if !bytes.Equal(out[0], out[2]) {
		t.Error("request 3 differs from request 1: drift-at=2 must leave it clean")
	}
	a, w, h := rgbOf(decodePNG(t, out[0]))
	b, _, _ := rgbOf(decodePNG(t, out[1]))
	if s := ssim(a, b, w, h); s >= 0.8 {
		t.Errorf("request 2 SSIM vs request 1 %.3f, want clearly below 0.9", s)
	}
}

// TestFaultOffsetShiftsEveryOutputUniformly checks that offset=L makes every request's
// output L levels brighter than a healthy server's, on images and video frames, and leaves
// the requests equal to each other.
func TestFaultOffsetShiftsEveryOutputUniformly(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	const levels = 12
	ts := start(t, Config{Faults: faults(t, "offset=12")})
	first, second := ts.image(t, small).media[0], ts.image(t, small).media[0]
	if !bytes.Equal(first, second) {
		t.Error("offset: request 2 differs from request 1; the offset must be the same on every request")
	}
	clean, _, _ := rgbOf(decodePNG(t, start(t, Config{}).image(t, small).media[0]))
	shifted, _, _ := rgbOf(decodePNG(t, first))
	for i := range clean {
		if want := byte(min(255, int(clean[i])+levels)); shifted[i] != want {
			t.Fatalf("sample %d: %d, want %d + %d = %d", i, shifted[i], clean[i], levels, want)
		}
	}
	v := map[string]any{"prompt": "p", "size": "64x48", "num_frames": 4, "seed": 1}
	_, vs := ts.video(t, v)
	_, vc := start(t, Config{}).video(t, v)
	fs, fc := frames(t, vs, 64, 48)[1], frames(t, vc, 64, 48)[1]
	var diff float64
	for i := range fc {
		diff += float64(fs[i]) - float64(fc[i])
	}
	// The video is H.264 (yuv420p): the shift survives the encoding within a level or two.
	if mean := diff / float64(len(fc)); mean < levels-2 || mean > levels+2 {
		t.Errorf("video frame mean shift %.2f levels, want about %d", mean, levels)
	}
}
