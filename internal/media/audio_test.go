package media

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/diffusion-check/diffusion-check/internal/media/mediatest"
)

func TestDecodeAudio(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	dir := t.TempDir()
	// A 2-frame video with a stereo 48 kHz AAC track of two tones.
	withAudio := filepath.Join(dir, "a.mp4")
	spec := &ToneSpec{Tones: []Tone{{FreqHz: 440, Amplitude: 0.3}, {FreqHz: 660, Amplitude: 0.2, Pan: 0.5}}}
	if err := OnPath().EncodeVideo(t.Context(), withAudio, 32, 32, 8, 8, func(int, []byte) {}, spec); err != nil {
		t.Fatal(err)
	}
	pcm, err := OnPath().DecodeAudio(t.Context(), withAudio)
	if err != nil {
		t.Fatal(err)
	}
	// SGLang's extract_audio_pcm: 16 kHz mono whatever the track was.
	if pcm.SampleRate != AudioRate || pcm.Channels != 2 {
		t.Errorf("rate %d, channels %d; want %d, 2 (before the mix-down)", pcm.SampleRate, pcm.Channels, AudioRate)
	}
	if d := pcm.DurationS(); math.Abs(d-1) > 0.05 {
		t.Errorf("duration %.3f s, want about 1 s (8 frames at 8 fps)", d)
	}
	var peak float64
	for _, v := range pcm.Samples {
		peak = math.Max(peak, math.Abs(float64(v)))
	}
	if peak < 0.2 || peak > 1 {
		t.Errorf("peak %.3f, want the tones' level", peak)
	}

	silent := filepath.Join(dir, "silent.mp4")
	if err := OnPath().EncodeVideo(t.Context(), silent, 32, 32, 2, 8, func(int, []byte) {}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := OnPath().DecodeAudio(t.Context(), silent); !errors.Is(err, ErrNoAudio) {
		t.Errorf("video without audio: %v, want ErrNoAudio", err)
	}
	empty := filepath.Join(dir, "empty.mp4")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OnPath().DecodeAudio(t.Context(), empty); err == nil || errors.Is(err, ErrNoAudio) {
		t.Errorf("empty file: %v, want an error other than ErrNoAudio", err)
	}
	garbage := filepath.Join(dir, "garbage.mp4")
	if err := os.WriteFile(garbage, []byte("this is not a video at all, just some text that ffprobe will reject"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OnPath().DecodeAudio(t.Context(), garbage); err == nil {
		t.Error("garbage: no error")
	}
}

func FuzzParseAudioStream(f *testing.F) {
	f.Add([]byte(`{"streams":[{"sample_rate":"48000","channels":2}]}`))
	f.Add([]byte(`{"streams":[]}`))
	f.Add([]byte(`{"streams":[{"sample_rate":"x","channels":0}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := parseAudioStream(b)
		if err == nil && (a.SampleRate <= 0 || a.Channels <= 0 || !finite(a.DurationS) || a.DurationS < 0) {
			t.Errorf("%+v without an error", a)
		}
	})
}
