package suite

import (
	"fmt"
	"net/url"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/strictdecode"
	"gopkg.in/yaml.v3"
)

// Realtime is a realtime (streaming) video case: each of its requests is one websocket
// session on SGLang's /v1/realtime_video/generate (realtime_video_api.py generate), read for
// NumChunks chunks and judged on the chunks' own timings, as SGLang's harness does for a case
// with realtime_num_chunks set (testcase_configs.py DiffusionSamplingParams, triple-mu/sglang
// 2026-08-20; realtime_consistency.py collect_realtime_output, 2026-06-02).
type Realtime struct {
	// NumChunks is how many chunks the session is read for (realtime_num_chunks).
	NumChunks int
	// IgnoreInitialChunks are left out of the perf metrics (realtime_perf_ignore_initial_chunks):
	// the first chunks pay for warm-up and compilation.
	IgnoreInitialChunks int
	// Thresholds maps SGLang's summary metric names (checks.RealtimeMetrics) to their limits
	// (realtime_perf_thresholds); a value above its limit fails.
	Thresholds map[string]float64
}

// maxRealtimeChunks caps num_chunks: the client refuses a session's chunk past it, so that a
// server that streams without end cannot keep a run going.
const maxRealtimeChunks = 4096

// realtime reads a case's realtime mapping. Every threshold must name a metric SGLang's
// summary will hold for the case's ignore_initial_chunks, which must leave a chunk to guard;
// SGLang finds either only once the session has run (validate_realtime_perf_stats and
// summarize_realtime_perf_stats raise ValueError), here the suite is refused at load.
func (d *decoder) realtime(raw *yaml.Node, field string, modality Modality) *Realtime {
	o := d.object(raw, field, keysOf(realtimeObject)...)
	if o == nil {
		return nil
	}
	rt := &Realtime{}
	if modality != "" && modality != Video {
		// SGLang's realtime endpoint streams frames only (no audio track, no image).
		d.Addf(o.line, field, "realtime cases stream video frames: want modality video, got %s", modality)
	}
	chunksOK := false
	if _, _, ok := o.require("num_chunks"); ok {
		chunksOK = o.integer("num_chunks", &rt.NumChunks) && o.atLeast("num_chunks", rt.NumChunks, 1)
		if chunksOK && rt.NumChunks > maxRealtimeChunks {
			d.Addf(o.lineOf("num_chunks"), strictdecode.Join(field, "num_chunks"), "must be ≤ %d, got %d", maxRealtimeChunks, rt.NumChunks)
			chunksOK = false
		}
	}
	if o.integer("ignore_initial_chunks", &rt.IgnoreInitialChunks) && o.atLeast("ignore_initial_chunks", rt.IgnoreInitialChunks, 0) &&
		chunksOK && rt.IgnoreInitialChunks >= rt.NumChunks {
		d.Addf(o.lineOf("ignore_initial_chunks"), strictdecode.Join(field, "ignore_initial_chunks"),
			"must leave at least one of the %d chunks to guard, got %d", rt.NumChunks, rt.IgnoreInitialChunks)
	}
	if v, f, ok := o.get("thresholds"); ok {
		rt.Thresholds = d.realtimeThresholds(v, f, rt.IgnoreInitialChunks)
	}
	return rt
}

// realtimeConcurrency is why a realtime case cannot send sessions at once: SGLang serves one
// realtime session at a time and refuses another after a second's wait ("another realtime
// session is already active", realtime_video_api.py generate, _ACTIVE_SESSION_IDS).
func realtimeConcurrency(n int) string {
	return fmt.Sprintf("must be 1 for a realtime case, got %d: SGLang serves one realtime session at a time and refuses a second (realtime_video_api.py)", n)
}

// realtimeThresholds reads the metric → limit mapping; an unknown metric is an error naming
// its line, with the known ones.
func (d *decoder) realtimeThresholds(raw *yaml.Node, field string, ignore int) map[string]float64 {
	es, ok := d.Entries(raw, field)
	if !ok {
		return nil
	}
	out := make(map[string]float64, len(es))
	for _, e := range es {
		f := strictdecode.Join(field, e.Name)
		if why := checks.RealtimeMetricProblem(e.Name, ignore); why != "" {
			d.Addf(e.Key.Line, f, "%s", why)
			continue
		}
		if v, ok := d.number(e.Val, f); ok {
			out[e.Name] = v
		}
	}
	return out
}

// IsURL reports whether an input (an input_reference, an image to edit) is an http(s) URL: a
// realtime case sends it as its first_frame string, as SGLang's prepare_realtime_first_frame
// does with an image URL (realtime_consistency.py, pandalee99/sglang @ cce0a1244), and the
// server fetches it; any other case fetches it and sends its bytes, as SGLang's harness
// downloads an image_path URL (download_image_from_url).
func IsURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
