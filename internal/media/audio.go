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
// than an unbounded allocation (30 minutes of mono float32 at 48 kHz is 345 MB).
const MaxAudioSeconds = 30 * 60

// PCM is a decoded audio track, mixed down to mono: Samples are in [-1, 1] at SampleRate Hz.
type PCM struct {
	SampleRate int
	// Channels is the number of channels the track had before the mix-down.
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

// DecodeAudio decodes the first audio stream of path through ffmpeg as float32 PCM, resampled
// to rate Hz (0 keeps the stream's own rate), and mixes its channels down to mono by averaging
// them. The samples are read as ffmpeg produces them, without an intermediate file; a track
// longer than MaxAudioSeconds is an error. A file without audio gives an error wrapping
// ErrNoAudio; one ffmpeg cannot decode gives an error that names it and quotes ffmpeg.
func DecodeAudio(ctx context.Context, path string, rate int) (PCM, error) {
	native, channels, err := AudioStream(ctx, path)
	if err != nil {
		return PCM{}, err
	}
	if rate <= 0 {
		rate = native
	}
	stderr := &tail{n: 4 << 10}
	cmd := command(ctx, "ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error",
		"-i", fileArg(path), "-map", "0:a:0", "-vn",
		"-f", "f32le", "-acodec", "pcm_f32le", "-ar", strconv.Itoa(rate), "-ac", strconv.Itoa(channels), "pipe:1")
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return PCM{}, fmt.Errorf("decode audio of %s: %w", path, err)
	}
	if err := cmd.Start(); err != nil {
		return PCM{}, fmt.Errorf("decode audio of %s: ffmpeg: %w", path, err)
	}
	pcm := PCM{SampleRate: rate, Channels: channels}
	rerr := readMono(bufio.NewReaderSize(stdout, 64<<10), channels, MaxAudioSeconds*rate, &pcm.Samples)
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
	case len(pcm.Samples) == 0:
		return PCM{}, fmt.Errorf("decode audio of %s: no samples decoded: %w", path, ErrTruncated)
	}
	return pcm, nil
}

// readMono reads interleaved little-endian float32 frames of the given channel count and
// appends their average to dst, up to maxFrames frames.
func readMono(r io.Reader, channels, maxFrames int, dst *[]float32) error {
	frame := make([]byte, 4*channels)
	for {
		if _, err := io.ReadFull(r, frame); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Errorf("ffmpeg stopped in the middle of a sample frame: %w", ErrTruncated)
			}
			return err
		}
		if len(*dst) >= maxFrames {
			return fmt.Errorf("audio longer than %d s (MaxAudioSeconds)", MaxAudioSeconds)
		}
		var sum float64
		for c := range channels {
			sum += float64(math.Float32frombits(binary.LittleEndian.Uint32(frame[4*c:])))
		}
		*dst = append(*dst, float32(sum/float64(channels)))
	}
}
