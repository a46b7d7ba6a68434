package refserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// timedRecord is what the timing tests compare of a perf record: its durations in ms.
type timedRecord struct {
	Stages map[string]float64
	Steps  []float64
	Total  float64
}

func timed(r perfRecord) timedRecord {
	out := timedRecord{Stages: map[string]float64{}, Steps: r.Steps, Total: r.TotalDurationMs}
	for _, s := range r.Stages {
		out.Stages[s.Name] = s.Ms
	}
	return out
}

// TestTimingReportsClockOrPlan runs three image requests (6 steps of 5 ms, 2 images of
// 16×16; request 2 slowed 10× by slow-at) in a bubble whose clock moves only when every
// goroutine waits, so that the sleeps take exactly their time and the CPU work none. Both
// timings sleep the same (the server is as slow either way); measured timing reports what the
// clock saw (decoding, CPU work only, takes 0 here), computed timing the plan: 0.25 steps per
// decoded image, and a total that is the sum of the stages.
func TestTimingReportsClockOrPlan(t *testing.T) {
	healthySteps := []float64{8, 5, 5, 5, 5, 5}    // step 0 × 1.6
	slowSteps := []float64{80, 50, 50, 50, 50, 50} // × 10
	record := func(decoding float64, steps []float64) timedRecord {
		var denoise float64
		for _, s := range steps {
			denoise += s
		}
		return timedRecord{
			Stages: map[string]float64{"TextEncodingStage": 7.5, "LatentPreparationStage": 2.5, "DenoisingStage": denoise, "DecodingStage": decoding},
			Steps:  steps, Total: 7.5 + 2.5 + denoise + decoding,
		}
	}
	for _, tc := range []struct {
		timing   Timing
		decoding float64 // ms
	}{
		{TimingMeasured, 0},
		{TimingComputed, 2.5},
	} {
		t.Run(string(tc.timing), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				dir := t.TempDir()
				h := warmHandler(Config{StepMs: 5, Timing: tc.timing, PerfLogDir: dir, StageLogging: true, Faults: faults(t, "slow-at=2:10")})
				defer h.Close()
				var took []time.Duration
				for range 3 {
					began := time.Now()
					serveImage(t, h, `{"prompt": "p", "size": "16x16", "n": 2, "num_inference_steps": 6}`)
					took = append(took, time.Since(began))
				}
				synctest.Wait() // the perf records are written
				var got []timedRecord
				for _, r := range perfRecords(t, dir) {
					got = append(got, timed(r))
				}
				want := []timedRecord{record(tc.decoding, healthySteps), record(tc.decoding, slowSteps), record(tc.decoding, healthySteps)}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("perf records (-want +got):\n%s", diff)
				}
				// The sleeps: 7.5 + 2.5 + 33 ms, and 7.5 + 2.5 + 330 ms for the slowed request.
				wantTook := []time.Duration{43 * time.Millisecond, 340 * time.Millisecond, 43 * time.Millisecond}
				if diff := cmp.Diff(wantTook, took); diff != "" {
					t.Errorf("time the requests took (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// TestTimingFlagValues: the names Set accepts are exactly Timings, the default first.
func TestTimingFlagValues(t *testing.T) {
	for _, want := range Timings() {
		var got Timing
		if err := got.Set(want.String()); err != nil || got != want {
			t.Errorf("Set(%q) = %q, %v", want, got, err)
		}
	}
	if Timings()[0] != DefaultTiming {
		t.Errorf("Timings() = %v, want the default %q first", Timings(), DefaultTiming)
	}
	var tm Timing
	if err := tm.Set("wallclock"); err == nil || err.Error() != `want measured or computed, got "wallclock"` {
		t.Errorf("Set(wallclock) = %v", err)
	}
	if err := (Config{Timing: "wallclock"}).Validate(); err == nil || !strings.Contains(err.Error(), `timing: want measured or computed, got "wallclock"`) {
		t.Errorf("Validate: %v", err)
	}
}

// serveImage sends one image generation request straight to the handler (no network, so
// that it runs inside a synctest bubble) and fails unless it is answered 200.
func serveImage(t *testing.T, h *Handler, body string) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/v1/images/generations", strings.NewReader(body)))
	if w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	var r imageReply
	if err := json.Unmarshal(w.Body.Bytes(), &r); err != nil {
		t.Fatalf("%v: %s", err, w.Body)
	}
}
