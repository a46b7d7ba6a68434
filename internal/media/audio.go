package media

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/diffusion-check/diffusion-check/internal/proc"
)

// ErrNoAudio is returned (wrapped) by AudioStream and DecodeAudio for a file without an audio
// stream.
var ErrNoAudio = errors.New("no audio stream")

// MaxAudioSeconds bounds what DecodeAudio holds in memory: a longer track is an error rather
// than an unbounded allocation (30 minutes of mono float32 at 16 kHz is 115 MB).
const MaxAudioSeconds = 30 * 60

// AudioRate is the rate DecodeAudio resamples every track to: SGLang's
// AUDIO_CONSISTENCY_SAMPLE_RATE (test_utils.py).
const AudioRate = 16000

// PCM is a decoded audio track, mixed down to mono: Samples at SampleRate Hz, full scale ±1.
type PCM struct {
	SampleRate int
	// Channels is the number of channels the track had before the mix-down (0 when not known,
	// as for a ground-truth WAV, which is mono).
	Channels int
	Samples  []float32
}

// DurationS is the track's length in seconds, from its sample count.
func (p PCM) DurationS() float64 {
	if p.SampleRate <= 0 {
		return 0
	}
	return float64(len(p.Samples)) / float64(p.SampleRate)
}

// AudioStream returns the sample rate and channel count of path's first audio stream, or an
// error wrapping ErrNoAudio when it has none. It reads only the headers (ProbeAudio).
func (t Tools) AudioStream(ctx context.Context, path string) (rate, channels int, err error) {
	a, err := t.ProbeAudio(ctx, path)
	return a.SampleRate, a.Channels, err
}

// ProbeAudio returns what ffprobe says of path's first audio stream: its codec, sample rate,
// channel count and duration (the stream's, else the container's, as SGLang's
// probe_audio_stream reads it), or an error wrapping ErrNoAudio when it has none. A stream
// without a valid rate or channel count is an error wrapping ErrTruncated. It reads only the
// headers.
func (t Tools) ProbeAudio(ctx context.Context, path string) (AudioInfo, error) {
	if err := checkFile("audio of", path); err != nil {
		return AudioInfo{}, err
	}
	stdout, _, err := t.ffprobe(ctx, "audio of", path,
		"-select_streams", "a:0", "-show_entries", "stream=codec_name,sample_rate,channels,duration:format=duration")
	if err != nil {
		return AudioInfo{}, err
	}
	a, err := parseAudioStream(stdout)
	if err != nil {
		return AudioInfo{}, fmt.Errorf("audio of %s: %w", path, err)
	}
	return a, nil
}

// parseAudioStream reads `ffprobe -select_streams a:0 -show_entries
// stream=codec_name,sample_rate,channels,duration:format=duration -of json` output.
func parseAudioStream(b []byte) (AudioInfo, error) {
	out, err := parseProbeOutput(b)
	if err != nil {
		return AudioInfo{}, err
	}
	if len(out.Streams) == 0 {
		return AudioInfo{}, ErrNoAudio
	}
	s := out.Streams[0]
	rate, err := strconv.Atoi(s.SampleRate)
	if err != nil || rate <= 0 || s.Channels <= 0 {
		return AudioInfo{}, fmt.Errorf("audio stream with sample rate %q and %d channels: %w", s.SampleRate, s.Channels, ErrTruncated)
	}
	return AudioInfo{Codec: s.CodecName, SampleRate: rate, Channels: s.Channels, DurationS: out.audioDuration(s)}, nil
}

// DecodeAudio decodes the first audio stream of path as SGLang's extract_audio_pcm does
// (test_utils.py): ffmpeg mixes it down to mono (-ac 1, ffmpeg's own down-mix matrix) and
// resamples it to AudioRate Hz, as little-endian float32. The samples are read as ffmpeg
// produces them, without an intermediate file; a track longer than MaxAudioSeconds is an
// error. A file without audio gives an error wrapping ErrNoAudio; one ffmpeg cannot decode gives
// an error that names it and quotes ffmpeg. A stream that decodes to no samples is no error:
// an empty PCM, which SGLang's checks reject (see checks.AudioOutput).
func (t Tools) DecodeAudio(ctx context.Context, path string) (PCM, error) {
	_, channels, err := t.AudioStream(ctx, path)
	if err != nil {
		return PCM{}, err
	}
	return t.DecodeAudioTrack(ctx, path, channels)
}

// DecodeAudioTrack is DecodeAudio for a file already known to have an audio stream of that
// many channels (FrameReader.Audio, Info.Audio): it does not ask ffprobe again.
func (t Tools) DecodeAudioTrack(ctx context.Context, path string, channels int) (PCM, error) {
	stderr := &proc.Tail{N: 4 << 10}
	// extract_audio_pcm's arguments, in its order; -nostdin and -hide_banner change no sample.
	cmd := t.command(ctx, "ffmpeg", "-hide_banner", "-nostdin", "-v", "error",
		"-i", fileArg(path), "-map", "0:a:0", "-vn", "-ac", "1", "-ar", strconv.Itoa(AudioRate), "-f", "f32le", "pipe:1")
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return PCM{}, fmt.Errorf("decode audio of %s: %w", path, err)
	}
	if err := cmd.Start(); err != nil {
		return PCM{}, fmt.Errorf("decode audio of %s: ffmpeg: %w", path, err)
	}
	pcm := PCM{SampleRate: AudioRate, Channels: channels}
	rerr := readSamples(bufio.NewReaderSize(stdout, 64<<10), MaxAudioSeconds*AudioRate, &pcm.Samples)
	if rerr != nil {
		// Stop ffmpeg: nobody reads the rest.
		_ = proc.Terminate(cmd)
	}
	werr := cmd.Wait()
	switch {
	case ctx.Err() != nil:
		return PCM{}, fmt.Errorf("decode audio of %s: %w", path, ctx.Err())
	case rerr != nil:
		return PCM{}, fmt.Errorf("decode audio of %s: %w", path, rerr)
	case werr != nil:
		return PCM{}, ffmpegError(ctx, "decode audio of "+path, werr, stderr)
	}
	return pcm, nil
}

// readSamples reads little-endian float32 samples and appends them to dst, up to most
// samples.
func readSamples(r io.Reader, most int, dst *[]float32) error {
	var b [4]byte
	for {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Errorf("ffmpeg stopped in the middle of a sample: %w", ErrTruncated)
			}
			return err
		}
		if len(*dst) >= most {
			return fmt.Errorf("audio longer than %d s (MaxAudioSeconds)", MaxAudioSeconds)
		}
		*dst = append(*dst, math.Float32frombits(binary.LittleEndian.Uint32(b[:])))
	}
}
