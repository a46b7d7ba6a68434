package media

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/diffusion-check/diffusion-check/internal/proc"
)

// EncodePNG encodes img as PNG. The standard library's encoder is deterministic: the same
// pixels always give the same bytes.
func EncodePNG(img image.Image) ([]byte, error) {
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&b, img); err != nil {
		return nil, fmt.Errorf("encode png: %w", err)
	}
	return b.Bytes(), nil
}

// EncodeJPEG encodes img as JPEG at quality 1–100 (0 means 90). Deterministic, like EncodePNG.
func EncodeJPEG(img image.Image, quality int) ([]byte, error) {
	if quality == 0 {
		quality = 90
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: quality}); err != nil {
		return nil, fmt.Errorf("encode jpeg: %w", err)
	}
	return b.Bytes(), nil
}

// EncodeWebP encodes img as a lossy WebP at quality 1–100 (0 means 90) with ffmpeg's libwebp
// encoder (the standard library has none). HasEncoder(ctx, "libwebp") says whether it can work.
func (t Tools) EncodeWebP(ctx context.Context, img image.Image, quality int) ([]byte, error) {
	if quality == 0 {
		quality = 90
	}
	r := img.Bounds()
	rgb := RGB24(img)
	var out bytes.Buffer
	stderr := &proc.Tail{N: 4 << 10}
	cmd := t.command(ctx, "ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error",
		"-f", "rawvideo", "-pix_fmt", "rgb24", "-s", fmt.Sprintf("%dx%d", r.Dx(), r.Dy()), "-i", "pipe:0",
		"-frames:v", "1", "-c:v", "libwebp", "-quality", strconv.Itoa(quality),
		"-fflags", "+bitexact", "-flags", "+bitexact", "-map_metadata", "-1", "-f", "webp", "pipe:1")
	cmd.Stdin = bytes.NewReader(rgb)
	cmd.Stdout = &out
	cmd.Stderr = stderr
	if err := cmd.Run(); err != nil {
		return nil, ffmpegError(ctx, "encode webp", err, stderr)
	}
	return out.Bytes(), nil
}

// RGB24 returns img's pixels as packed 8-bit RGB, row after row, alpha dropped.
func RGB24(img image.Image) []byte {
	r := img.Bounds()
	out := make([]byte, 0, 3*r.Dx()*r.Dy())
	if m, ok := img.(*image.RGBA); ok {
		for y := r.Min.Y; y < r.Max.Y; y++ {
			row := m.Pix[m.PixOffset(r.Min.X, y):m.PixOffset(r.Max.X, y)]
			for x := 0; x < len(row); x += 4 {
				out = append(out, row[x], row[x+1], row[x+2])
			}
		}
		return out
	}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			out = append(out, byte(cr>>8), byte(cg>>8), byte(cb>>8))
		}
	}
	return out
}

// ToneSpec describes a deterministic audio track: a sum of sine tones, the same for the same
// spec, with short fades at both ends so that it starts and stops without a click.
type ToneSpec struct {
	SampleRate int // Hz; 0 means 48000
	Channels   int // 1 or 2; 0 means 2
	Tones      []Tone
}

// Tone is one sine of a ToneSpec. Keep the sum of the amplitudes at most 1: louder samples clip.
type Tone struct {
	FreqHz    float64
	Amplitude float64 // linear peak, 0–1
	PhaseRad  float64
	// TremoloHz modulates the tone's loudness between 50% and 100% at this rate; 0 is steady.
	TremoloHz float64
	// Pan places the tone from -1 (left) to 1 (right); ignored for mono.
	Pan float64
}

func (t *ToneSpec) withDefaults() ToneSpec {
	s := *t
	if s.SampleRate == 0 {
		s.SampleRate = 48000
	}
	if s.Channels == 0 {
		s.Channels = 2
	}
	return s
}

// writePCM writes the track's first n samples per channel as interleaved little-endian float32.
func (t ToneSpec) writePCM(w *bufio.Writer, n int) error {
	fade := t.SampleRate / 200 // 5 ms
	gains := make([][2]float64, len(t.Tones))
	for k, tone := range t.Tones {
		a := (math.Max(-1, math.Min(1, tone.Pan)) + 1) * math.Pi / 4 // equal-power pan
		gains[k] = [2]float64{math.Cos(a) * math.Sqrt2, math.Sin(a) * math.Sqrt2}
	}
	var b [4]byte
	for i := range n {
		sec := float64(i) / float64(t.SampleRate)
		env := 1.0
		if i < fade {
			env = float64(i) / float64(fade)
		} else if n-1-i < fade {
			env = float64(n-1-i) / float64(fade)
		}
		var l, r float64
		for k, tone := range t.Tones {
			v := tone.Amplitude * math.Sin(2*math.Pi*tone.FreqHz*sec+tone.PhaseRad)
			if tone.TremoloHz != 0 {
				v *= 0.75 + 0.25*math.Cos(2*math.Pi*tone.TremoloHz*sec)
			}
			l += v * gains[k][0]
			r += v * gains[k][1]
		}
		ch := [2]float64{l, r}
		if t.Channels == 1 {
			ch[0] = (l + r) / 2
		}
		for c := range t.Channels {
			v := math.Max(-1, math.Min(1, ch[c%2]*env))
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(float32(v)))
			if _, err := w.Write(b[:]); err != nil {
				return err
			}
		}
	}
	return w.Flush()
}

// EncodeVideo writes an H.264 MP4 (yuv420p, +faststart) of frames w×h frames at fps to dst.
// frame(i, rgb) fills rgb (3·w·h bytes, packed RGB) with frame i; the one buffer is reused, so
// memory does not grow with the frame count. When audio is not nil the file gets an AAC track
// of the tones, as long as the video (frames/fps seconds).
//
// The output is deterministic: the same frames and tones give the same bytes (checked by a
// test that encodes twice). x264 runs with one thread, because its output may depend on its
// thread count, which would otherwise follow the machine's core count; the muxer runs in
// bitexact mode (no version string) without metadata (no creation time).
// w and h must be even (4:2:0 chroma). On failure dst is removed and the error quotes ffmpeg.
func (t Tools) EncodeVideo(ctx context.Context, dst string, w, h, frames int, fps int, frame func(i int, rgb []byte), audio *ToneSpec) error {
	switch {
	case w <= 0 || h <= 0 || w%2 != 0 || h%2 != 0:
		return fmt.Errorf("encode %s: size %dx%d: width and height must be even and positive (yuv420p)", dst, w, h)
	case frames <= 0:
		return fmt.Errorf("encode %s: %d frames: need at least one", dst, frames)
	case fps <= 0:
		return fmt.Errorf("encode %s: fps %d: must be positive", dst, fps)
	}
	args := rawFramesInput(w, h, fps)
	if audio != nil {
		spec := audio.withDefaults()
		if spec.Channels != 1 && spec.Channels != 2 {
			return fmt.Errorf("encode %s: audio channels %d: want 1 or 2", dst, spec.Channels)
		}
		pcm, err := os.CreateTemp(filepath.Dir(dst), ".audio-*.f32le")
		if err != nil {
			return fmt.Errorf("encode %s: %w", dst, err)
		}
		defer os.Remove(pcm.Name())
		n := int(math.Round(float64(frames) / float64(fps) * float64(spec.SampleRate)))
		werr := spec.writePCM(bufio.NewWriterSize(pcm, 64<<10), n)
		if cerr := pcm.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return fmt.Errorf("encode %s: writing audio: %w", dst, werr)
		}
		args = append(args, "-f", "f32le", "-ar", strconv.Itoa(spec.SampleRate), "-ac", strconv.Itoa(spec.Channels), "-i", fileArg(pcm.Name()),
			"-map", "0:v:0", "-map", "1:a:0", "-c:a", "aac", "-b:a", "128k")
	}
	args = append(args, "-c:v", "libx264", "-preset", "ultrafast", "-crf", "16", "-pix_fmt", "yuv420p", "-threads", "1",
		"-movflags", "+faststart", "-fflags", "+bitexact", "-flags", "+bitexact", "-map_metadata", "-1", "-f", "mp4", fileArg(dst))
	return t.encodeFrames(ctx, dst, w, h, frames, frame, args)
}

// EncodeLosslessVideo writes frames w×h frames at fps to dst as FFV1 (bgr0) in Matroska: the
// frames decode again (OpenFrames) to exactly the bytes frame wrote, so a comparison of them
// with a ground truth measures what the server sent, not a codec's loss. The realtime client
// keeps a session's streamed frames this way, as SGLang's harness compares the raw websocket
// frames, not its lossy MP4 (test_server_common.py, "realtime consistency uses websocket raw
// frames to avoid lossy mp4 drift"). frame(i, rgb) fills rgb as for EncodeVideo; any positive
// size works. On failure dst is removed and the error quotes ffmpeg.
func (t Tools) EncodeLosslessVideo(ctx context.Context, dst string, w, h, frames int, fps int, frame func(i int, rgb []byte)) error {
	switch {
	case w <= 0 || h <= 0:
		return fmt.Errorf("encode %s: size %dx%d: width and height must be positive", dst, w, h)
	case frames <= 0:
		return fmt.Errorf("encode %s: %d frames: need at least one", dst, frames)
	case fps <= 0:
		return fmt.Errorf("encode %s: fps %d: must be positive", dst, fps)
	}
	args := append(rawFramesInput(w, h, fps),
		"-c:v", "ffv1", "-pix_fmt", "bgr0", "-threads", "1",
		"-fflags", "+bitexact", "-flags", "+bitexact", "-map_metadata", "-1", "-f", "matroska", fileArg(dst))
	return t.encodeFrames(ctx, dst, w, h, frames, frame, args)
}

// rawFramesInput are ffmpeg's arguments up to its first input: packed RGB frames of w×h at fps
// on stdin, which encodeFrames writes.
func rawFramesInput(w, h, fps int) []string {
	return []string{"-hide_banner", "-nostdin", "-loglevel", "error", "-y",
		"-f", "rawvideo", "-pix_fmt", "rgb24", "-s", fmt.Sprintf("%dx%d", w, h), "-framerate", strconv.Itoa(fps), "-i", "pipe:0"}
}

// encodeFrames runs ffmpeg with args, which read packed RGB frames of w×h from stdin, and
// feeds it frames frames from frame. On failure dst is removed.
func (t Tools) encodeFrames(ctx context.Context, dst string, w, h, frames int, frame func(i int, rgb []byte), args []string) (err error) {
	stderr := &proc.Tail{N: 4 << 10}
	cmd := t.command(ctx, "ffmpeg", args...)
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("encode %s: %w", dst, err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("encode %s: ffmpeg: %w", dst, err)
	}
	defer func() {
		if err != nil {
			os.Remove(dst)
		}
	}()
	rgb := make([]byte, 3*w*h)
	var werr error
	for i := range frames {
		frame(i, rgb)
		if _, werr = stdin.Write(rgb); werr != nil {
			break // ffmpeg is gone; Wait says why
		}
	}
	// Closing ffmpeg's stdin is its end of input; a failure there shows in Wait's error.
	_ = stdin.Close()
	if err := cmd.Wait(); err != nil {
		return ffmpegError(ctx, "encode "+dst, err, stderr)
	}
	if werr != nil {
		return fmt.Errorf("encode %s: writing frames: %w", dst, werr)
	}
	return nil
}

// ffmpegError describes a failed ffmpeg run: the context's error when it was cancelled, else
// the tail of ffmpeg's stderr, else the exit status.
func ffmpegError(ctx context.Context, what string, err error, stderr *proc.Tail) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", what, ctx.Err())
	}
	if msg := stderrText(stderr.Bytes(), ""); msg != "" {
		return fmt.Errorf("%s: ffmpeg: %s", what, msg)
	}
	var ee interface{ ExitCode() int }
	if errors.As(err, &ee) {
		return fmt.Errorf("%s: ffmpeg exited with status %d", what, ee.ExitCode())
	}
	return fmt.Errorf("%s: ffmpeg: %w", what, err)
}
