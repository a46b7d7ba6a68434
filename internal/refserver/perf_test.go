package refserver

import (
	"net/http"
	"regexp"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/media/mediatest"
)

var timestampRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$`)

func stageNames(r perfRecord) []string {
	var out []string
	for _, s := range r.Stages {
		out = append(out, s.Name)
	}
	return out
}

func TestPerfRecords(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	ts := start(t, Config{StepMs: 2})
	began := time.Now()
	img := ts.image(t, map[string]any{"prompt": "p", "size": "64x64", "num_inference_steps": 5})
	job, _ := ts.video(t, map[string]any{"prompt": "p", "size": "64x48", "num_frames": 4, "num_inference_steps": 3})
	// Measured timings: each at least what it slept, and none longer than the test saw.
	elapsed := ms(time.Since(began))
	recs := waitRecords(t, ts.dir, 2)
	if recs[0].RequestID != img.ID || recs[1].RequestID != job.ID {
		t.Fatalf("record ids %s, %s; want %s, %s", recs[0].RequestID, recs[1].RequestID, img.ID, job.ID)
	}
	for i, r := range recs {
		steps := []int{5, 3}[i]
		if r.Tag != "pipeline_stage_metrics" || r.CommitHash == "" || !timestampRE.MatchString(r.Timestamp) {
			t.Errorf("record %d header: %+v", i, r)
		}
		want := []string{"TextEncodingStage", "LatentPreparationStage", "DenoisingStage", "DecodingStage"}
		if got := stageNames(r); !slices.Equal(got, want) {
			t.Errorf("record %d stages %v, want %v", i, got, want)
		}
		if len(r.Steps) != steps {
			t.Fatalf("record %d: %d steps, want %d", i, len(r.Steps), steps)
		}
		var sum, denoise float64
		for _, s := range r.Stages {
			sum += s.Ms
			if s.Name == "DenoisingStage" {
				denoise = s.Ms
			}
		}
		var stepSum float64
		for k, s := range r.Steps {
			if s < 2 {
				t.Errorf("record %d step %d: %.3f ms, want ≥ 2 (slept)", i, k, s)
			}
			stepSum += s
		}
		if r.Steps[0] < 3.2 {
			t.Errorf("record %d: warm-up step 0 took %.3f ms, want ≥ 3.2", i, r.Steps[0])
		}
		if denoise < stepSum || r.TotalDurationMs < sum || r.TotalDurationMs > elapsed {
			t.Errorf("record %d: denoise %.3f vs steps %.3f, total %.3f vs stages %.3f and %.3f ms of the test", i, denoise, stepSum, r.TotalDurationMs, sum, elapsed)
		}
		m := r.MemorySnapshots
		if m.LoadPeak.PeakReservedMB != loadReservedMiB || m.RuntimePeak.PeakReservedMB <= m.LoadPeak.PeakReservedMB ||
			m.RuntimePeak.PeakAllocatedMB > m.RuntimePeak.PeakReservedMB {
			t.Errorf("record %d memory %+v", i, m)
		}
	}
	if recs[0].MemorySnapshots.RuntimePeak.PeakReservedMB != img.PeakMemoryMB || *job.PeakMemoryMB != recs[1].MemorySnapshots.RuntimePeak.PeakReservedMB {
		t.Error("peak_memory_mb of the responses differs from the records' runtime peak")
	}
	// Edits report their image encoding.
	ct, body := multipartBody(t, map[string]string{"prompt": "p"}, multipartFile{"image", "a.png", must(encodeTestPNG(16, 16))})
	st, b := ts.call(t, http.MethodPost, "/v1/images/edits", ct, body)
	decodeImageReply(t, st, b)
	recs = waitRecords(t, ts.dir, 3)
	if !slices.Contains(stageNames(recs[2]), "ImageEncodingStage") {
		t.Errorf("edit stages %v lack ImageEncodingStage", stageNames(recs[2]))
	}
}

func TestPerfRecordsConcurrent(t *testing.T) {
	ts := start(t, Config{})
	const k = 6
	ids := make(chan string, k)
	var wg sync.WaitGroup
	for range k {
		wg.Go(func() {
			ids <- ts.image(t, map[string]any{"prompt": "same", "size": "32x32"}).ID
		})
	}
	wg.Wait()
	close(ids)
	var want []string
	for id := range ids {
		want = append(want, id)
	}
	var got []string
	for _, r := range waitRecords(t, ts.dir, k) {
		got = append(got, r.RequestID)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("record ids %v, want %v", got, want)
	}
}

// TestPerfLag: the record is written perf_lag after the response, not before; one still
// waiting when the server closes is written at once. In a bubble, so that the lag is exact.
func TestPerfLag(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		h := warmHandler(Config{StepMs: 1, PerfLogDir: dir, StageLogging: true, PerfLag: 300 * time.Millisecond})
		defer h.Close()
		body := `{"prompt": "p", "size": "16x16", "num_inference_steps": 1}`
		serveImage(t, h, body)
		time.Sleep(300*time.Millisecond - time.Nanosecond)
		synctest.Wait()
		if recs := perfRecords(t, dir); len(recs) != 0 {
			t.Fatalf("record written before the lag: %+v", recs)
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		if recs := perfRecords(t, dir); len(recs) != 1 {
			t.Fatalf("%d records once the lag is over, want 1", len(recs))
		}
		serveImage(t, h, body)
		h.Close()
		if recs := perfRecords(t, dir); len(recs) != 2 {
			t.Errorf("after Close: %d records, want 2", len(recs))
		}
	})
}
