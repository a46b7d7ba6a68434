package clip

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/proc"
)

// The CLIP check needs a model, which diffusion-check does not carry: it asks an external
// scorer. The protocol, for any command:
//
//	stdin:  {"pairs": [{"output": "/abs/out.png", "ground_truth": "/abs/gt.png"}, ...]}
//	stdout: {"scores": [0.987, ...]}
//
// one score per pair, in order: the cosine of the two images' CLIP embeddings (null when the
// scorer could not score a pair). A non-zero exit status, output that is not that JSON, or a
// run longer than the timeout is an error.

// Pair is one image pair sent to a CLIP scorer; the paths are absolute.
type Pair struct {
	Output      string `json:"output"`
	GroundTruth string `json:"ground_truth"`
}

// DefaultTimeout bounds a scorer run when Scorer.Timeout is 0: loading a CLIP model on
// a cold cache takes tens of seconds.
const DefaultTimeout = 5 * time.Minute

// Scorer runs an external CLIP scorer command.
type Scorer struct {
	// Command is the argv of the scorer; Command[0] is looked up in PATH.
	Command []string
	Timeout time.Duration
	// Nice is how many steps of niceness below this process the scorer runs (proc.Nice): a
	// validation's scorer must not slow the server it measures.
	Nice proc.Nice
}

// maxScorerOutput bounds what is read of a scorer's stdout and kept of its stderr.
const maxScorerOutput = 1 << 20

// Score sends pairs to the scorer and returns its scores, one per pair; a null score is NaN.
func (s *Scorer) Score(ctx context.Context, pairs []Pair) ([]float64, error) {
	return s.run(ctx, "clip scorer", struct {
		Pairs []Pair `json:"pairs"`
	}{pairs}, len(pairs))
}

// QualityPair is one image sent to a quality scorer, with the prompt that made it; the path
// is absolute.
type QualityPair struct {
	Prompt string `json:"prompt"`
	Image  string `json:"image"`
}

// Quality asks the scorer for one no-reference quality metric of each image (SGLang's
// quality_metrics.py: "clip_score", CLIP prompt adherence, 100 × cosine; "clip_iqa", in
// [0, 1]; "image_reward", ImageReward-v1.0), by the quality protocol:
//
//	stdin:  {"metric": "clip_score", "pairs": [{"prompt": "a fox", "image": "/abs/out.png"}, ...]}
//	stdout: {"scores": [31.2, ...]}
//
// one score per pair, in order (null when the scorer could not score one); errors as Score's.
func (s *Scorer) Quality(ctx context.Context, metric string, pairs []QualityPair) ([]float64, error) {
	return s.run(ctx, "quality scorer", struct {
		Metric string        `json:"metric"`
		Pairs  []QualityPair `json:"pairs"`
	}{metric, pairs}, len(pairs))
}

// run sends payload to the scorer (what names it in errors) and reads its n scores.
func (s *Scorer) run(ctx context.Context, what string, payload any, n int) ([]float64, error) {
	if len(s.Command) == 0 {
		return nil, fmt.Errorf("%s: no command", what)
	}
	name := strings.Join(s.Command, " ")
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	in, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", what, name, err)
	}
	cmd := s.Nice.Command(ctx, 5*time.Second, s.Command[0], s.Command[1:]...)
	cmd.Stdin = bytes.NewReader(in)
	stdout := &proc.Head{N: maxScorerOutput}
	stderr := &proc.Tail{N: 4 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%s %q: no answer within %s", what, name, timeout)
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s %q: %w", what, name, ctx.Err())
		}
		if msg := strings.TrimSpace(string(stderr.Bytes())); msg != "" {
			return nil, fmt.Errorf("%s %q: %w: %s", what, name, err, lastLines(msg, 3))
		}
		return nil, fmt.Errorf("%s %q: %w", what, name, err)
	}
	if stdout.Over() {
		return nil, fmt.Errorf("%s %q: more than %d bytes on stdout", what, name, maxScorerOutput)
	}
	scores, err := ParseScores(stdout.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", what, name, err)
	}
	if len(scores) != n {
		return scores, fmt.Errorf("%s %q: %d scores for %d pairs", what, name, len(scores), n)
	}
	return scores, nil
}

// ParseScores reads a scorer's stdout, {"scores": [number or null, ...]}; null is NaN.
// Unknown keys are errors: a scorer that answers something else must not pass.
func ParseScores(b []byte) ([]float64, error) {
	var out struct {
		Scores *[]*float64 `json:"scores"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf(`read {"scores": [...]} from stdout: %w`, err)
	}
	if dec.More() {
		return nil, errors.New(`read {"scores": [...]} from stdout: more than one JSON value`)
	}
	if out.Scores == nil {
		return nil, errors.New(`read {"scores": [...]} from stdout: no "scores" key`)
	}
	scores := make([]float64, len(*out.Scores))
	for i, p := range *out.Scores {
		scores[i] = math.NaN()
		if p != nil {
			scores[i] = *p
		}
	}
	return scores, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}
