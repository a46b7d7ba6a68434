package refserver

import (
	"fmt"
	"strings"
	"time"
)

// Timing is where the durations of a perf record (stages, steps, total) come from. Either way
// the server sleeps and works the same, so a request takes as long and timeouts, heartbeats
// and faults behave the same; only the numbers it reports differ.
type Timing string

const (
	// TimingMeasured times every stage and step with the monotonic clock around its sleep or
	// work, as a real server does: a loaded machine shows in the numbers (sleeps overshoot,
	// encoding waits for a core).
	TimingMeasured Timing = "measured"
	// TimingComputed reports the duration the model plans for each part (its multiple of the
	// step time, the slow faults' factors, decodingStepsPerFrame per decoded frame), not what
	// the clock saw: the same request gives the same numbers on any machine under any load,
	// so perf verdicts of tests cannot depend on the machine's speed.
	TimingComputed Timing = "computed"
)

// DefaultTiming is the Timing of a Config that sets none.
const DefaultTiming = TimingMeasured

// Timings lists every Timing, the default first: the one list that flags, the suite's
// builtin server and the docs are checked against.
func Timings() []Timing { return []Timing{TimingMeasured, TimingComputed} }

// String returns the timing's name.
func (t Timing) String() string { return string(t) }

// Set parses a timing name (flag.Value).
func (t *Timing) Set(s string) error {
	for _, v := range Timings() {
		if s == string(v) {
			*t = v
			return nil
		}
	}
	names := make([]string, 0, len(Timings()))
	for _, v := range Timings() {
		names = append(names, string(v))
	}
	return fmt.Errorf("want %s, got %q", strings.Join(names, " or "), s)
}

// decodingStepsPerFrame is the decoding time of one decoded frame (an image, or a frame of a
// video) with computed timing, as a multiple of the step time.
const decodingStepsPerFrame = 0.25

// stopwatch times the parts of one generation as the server's Timing says. Each part comes
// with the duration the model plans for it (nominal): computed timing reports exactly that,
// measured timing what the clock saw from the part's start until now.
type stopwatch struct {
	computed bool
	start    time.Time
	planned  time.Duration // the nominal durations of the stages so far
}

func newStopwatch(t Timing) *stopwatch {
	return &stopwatch{computed: t == TimingComputed, start: time.Now()}
}

// took is the duration of a part that began at since and was planned to take nominal.
func (s *stopwatch) took(since time.Time, nominal time.Duration) time.Duration {
	if s.computed {
		return nominal
	}
	return time.Since(since)
}

// stage is the duration of a stage that began at since and was planned to take nominal; the
// nominal time counts towards the computed total.
func (s *stopwatch) stage(since time.Time, nominal time.Duration) time.Duration {
	s.planned += nominal
	return s.took(since, nominal)
}

// total is the duration of the whole generation: the sum of its stages' planned times with
// computed timing, the time since the stopwatch started with measured timing.
func (s *stopwatch) total() time.Duration { return s.took(s.start, s.planned) }
