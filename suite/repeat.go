package suite

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/schema"
	"github.com/diffusion-check/diffusion-check/internal/strictdecode"
)

// repeatObject is the mapping of the consistency.repeat thresholds, at the top of a suite
// (for every case) and in a case (for that case, key by key over the suite's).
const repeatObject = "repeat_thresholds"

// repeatKey is one key of repeat_thresholds and the limit of checks.RepeatLimits it sets.
type repeatKey struct {
	key
	limit func(*checks.RepeatLimits) *float64
}

// repeatKeys lists the keys of repeat_thresholds: one per limit of the consistency.repeat
// checks, named as the check they bound (checks/repeat.go).
func repeatKeys() []repeatKey {
	zero, one := schema.Ptr(0.0), schema.Ptr(1.0)
	def := checks.DefaultRepeatLimits()
	k := func(name string, least, most *float64, doc string, limit func(*checks.RepeatLimits) *float64) repeatKey {
		return repeatKey{key{name: name, kind: numberValue, least: least, most: most,
			doc: fmt.Sprintf("%s; default %g", doc, *limit(&def))}, limit}
	}
	return []repeatKey{
		k("ssim", zero, one,
			"least SSIM of every frame of request k against the same frame of request 1", func(l *checks.RepeatLimits) *float64 { return &l.SSIM }),
		k("psnr", zero, nil, "least PSNR (dB) of every frame against request 1's", func(l *checks.RepeatLimits) *float64 { return &l.PSNR }),
		k("mean_abs_diff", zero, schema.Ptr(255.0),
			"most mean absolute difference (0–255) of every frame against request 1's", func(l *checks.RepeatLimits) *float64 { return &l.MeanAbsDiff }),
		k("audio_spectral_similarity", zero, one,
			"least spectral similarity of the audio track against request 1's", func(l *checks.RepeatLimits) *float64 { return &l.SpectralSimilarity }),
		k("audio_waveform_correlation", schema.Ptr(-1.0), one,
			"least waveform correlation of the audio track against request 1's", func(l *checks.RepeatLimits) *float64 { return &l.WaveformCorrelation }),
		k("audio_rms_db_diff", zero, nil,
			"most RMS level difference (dB) of the audio track against request 1's", func(l *checks.RepeatLimits) *float64 { return &l.RMSdBDiff }),
		k("audio_duration_diff", zero, nil,
			"most duration difference (s) of the audio track against request 1's", func(l *checks.RepeatLimits) *float64 { return &l.DurationDiffS }),
	}
}

// repeatTableKeys is repeatKeys as keys of the key table.
func repeatTableKeys() []key {
	var out []key
	for _, k := range repeatKeys() {
		out = append(out, k.key)
	}
	return out
}

// repeatLimits reads the repeat_thresholds of an object (the suite, a case) over inherit:
// each key it sets replaces the inherited limit, and Origin says, key by key, where every
// limit comes from (e.g. "cases[0].repeat_thresholds (ssim), built-in repeat defaults
// (psnr, mean_abs_diff, ...)").
func (d *decoder) repeatLimits(o *object, inherit repeatInherit) repeatInherit {
	lim := inherit.limits
	origins := map[string]string{}
	for name, where := range inherit.from {
		origins[name] = where
	}
	v, field, ok := o.get(repeatObject)
	if ok {
		if ro := d.object(v, field, keysOf(repeatObject)...); ro != nil {
			for _, k := range repeatKeys() {
				var x float64
				if !ro.number(k.name, &x) {
					continue
				}
				if (k.least != nil && x < *k.least) || (k.most != nil && x > *k.most) {
					d.Addf(ro.lineOf(k.name), strictdecode.Join(field, k.name), "must be within %s, got %v", bounds(k.key), x)
					continue
				}
				*k.limit(&lim) = x
				origins[k.name] = filepath.Base(d.File) + " " + field
			}
		}
	}
	lim.Origin = repeatOrigin(origins)
	return repeatInherit{lim, origins}
}

// repeatInherit is the repeat thresholds an enclosing level set, and where each was set.
type repeatInherit struct {
	limits checks.RepeatLimits
	from   map[string]string // by key name; absent: the built-in default
}

// bounds writes a number key's allowed range.
func bounds(k key) string {
	switch {
	case k.least != nil && k.most != nil:
		return fmt.Sprintf("[%g, %g]", *k.least, *k.most)
	case k.least != nil:
		return fmt.Sprintf("[%g, ∞)", *k.least)
	}
	return fmt.Sprintf("(−∞, %g]", *k.most)
}

// repeatOrigin groups the keys by where they were set, in key order; a key set nowhere is a
// built-in default.
func repeatOrigin(origins map[string]string) string {
	var order []string
	keysAt := map[string][]string{}
	for _, k := range repeatKeys() {
		where := origins[k.name]
		if where == "" {
			where = checks.DefaultRepeatLimits().Origin
		}
		if keysAt[where] == nil {
			order = append(order, where)
		}
		keysAt[where] = append(keysAt[where], k.name)
	}
	if len(order) == 1 {
		return order[0]
	}
	parts := make([]string, len(order))
	for i, where := range order {
		parts[i] = where + " (" + strings.Join(keysAt[where], ", ") + ")"
	}
	return strings.Join(parts, ", ")
}
