package media

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
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
// error wrapping ErrNoAudio when it has none. It reads only the headers.
func AudioStream(ctx context.Context, path string) (rate, channels int, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, 0, fmt.Errorf("audio of %s: %w", path, err)
	}
	if st.Size() == 0 {
		return 0, 0, fmt.Errorf("audio of %s: empty file", path)
	}
	var stdout bytes.Buffer
	stderr := &tail{n: 4 << 10}
	cmd := command(ctx, "ffprobe", "-v", "error", "-select_streams", "a:0",
		"-show_entries", "stream=sample_rate,channels", "-of", "json", fileArg(path))
	cmd.Stdout = &stdout
	cmd.Stderr = stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return 0, 0, fmt.Errorf("audio of %s: %w", path, ctx.Err())
		}
		if msg := stderrText(stderr.Bytes(), path); msg != "" {
			return 0, 0, fmt.Errorf("audio of %s: ffprobe: %s", path, msg)
		}
		return 0, 0, fmt.Errorf("audio of %s: ffprobe: %w", path, err)
	}
	rate, channels, err = parseAudioStream(stdout.Bytes())
	if err != nil {
		return 0, 0, fmt.Errorf("audio of %s: %w", path, err)
	}
	return rate, channels, nil
}

// parseAudioStream reads `ffprobe -select_streams a:0 -show_entries stream=sample_rate,channels
// -of json` output.
func parseAudioStream(b []byte) (rate, channels int, err error) {
	var out struct {
		Streams []struct {
			SampleRate string `json:"sample_rate"`
			Channels   int    `json:"channels"`
		} `json:"streams"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return 0, 0, fmt.Errorf("read ffprobe output: %w", err)
	}
	if len(out.Streams) == 0 {
		return 0, 0, ErrNoAudio
	}
	s := out.Streams[0]
	rate, err = strconv.Atoi(s.SampleRate)
	if err != nil || rate <= 0 || s.Channels <= 0 {
		return 0, 0, fmt.Errorf("audio stream with sample rate %q and %d channels: %w", s.SampleRate, s.Channels, ErrTruncated)
	}
	return rate, s.Channels, nil
}

// DecodeAudio decodes the first audio stream of path as SGLang's extract_audio_pcm does
// (test_utils.py): ffmpeg mixes it down to mono (-ac 1, ffmpeg's own down-mix matrix) and
// resamples it to AudioRate Hz, as little-endian float32. The samples are read as ffmpeg
// produces them, without an intermediate file; a track longer than MaxAudioSeconds is an
// error. A file without audio gives an error wrapping ErrNoAudio; one ffmpeg cannot decode gives
// an error that names it and quotes ffmpeg. A stream that decodes to no samples is no error:
// an empty PCM, which SGLang's checks reject (see checks.AudioOutput).
func DecodeAudio(ctx context.Context, path string) (PCM, error) {
	_, channels, err := AudioStream(ctx, path)
	if err != nil {
		return PCM{}, err
	}
	return DecodeAudioTrack(ctx, path, channels)
}

// DecodeAudioTrack is DecodeAudio for a file already known to have an audio stream of that
// many channels (FrameReader.Audio, Info.Audio): it does not ask ffprobe again.
func DecodeAudioTrack(ctx context.Context, path string, channels int) (PCM, error) {
	stderr := &tail{n: 4 << 10}
	// extract_audio_pcm's arguments, in its order; -nostdin and -hide_banner change no sample.
	cmd := command(ctx, "ffmpeg", "-hide_banner", "-nostdin", "-v", "error",
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
