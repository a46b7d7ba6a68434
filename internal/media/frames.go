package media

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"

	"github.com/diffusion-check/diffusion-check/internal/inputfile"
	"github.com/diffusion-check/diffusion-check/internal/proc"
)

// maxPixels bounds the frame size a header may announce (a 16384×16384 frame), so that a
// mangled header cannot make the reader allocate gigabytes.
const maxPixels = 1 << 28

// FrameReader streams the frames of a video (or the one frame of an image) as packed 8-bit RGB,
// one at a time, through an ffmpeg subprocess: the whole video is never held in memory.
//
// Frames are converted with ffmpeg's rgb24 output, never gray (which rescales the luma range),
// and passed through as decoded (-fps_mode passthrough, or -vsync passthrough before FFmpeg 5.1:
// Tools): no frame is duplicated or dropped to
// fit a frame rate, so the count is the number of frames the stream holds.
type FrameReader struct {
	path   string
	w, h   int
	listed int // frames the container lists; 0 when it does not say
	d      *decoder
	parent context.Context
	tools  Tools // resolved: the options and niceness of its ffmpeg
	n      int   // frames read so far
	err    error // sticky: io.EOF after the last frame, or what went wrong
	warn   []string

	// audioRate and audioChannels describe the file's first audio stream; 0 when it has none.
	audioRate, audioChannels int
	hdr                      FrameHeader // what the probe said
	threads                  int         // DecodeOptions.Threads

	// The yuv420p path (yuv.go): ffmpeg sends yuv420p, converted here into the caller's buffer
	// with coef. Unless this process has already proven coef (yuvVerdicts), the decoder's proof
	// says at the end of the stream whether coef converts as ffmpeg does.
	yuv  []byte // nil on the rgb24 path
	coef yuvCoeffs
}

// decoder is one running ffmpeg of a FrameReader.
type decoder struct {
	yuv    bool // it sends yuv420p (else rgb24)
	cmd    *exec.Cmd
	stdout io.ReadCloser
	y4m    *y4mReader // on the yuv420p path, the framing around the planes, read through its buffer
	stderr *proc.Tail
	cancel context.CancelFunc
	// proof, when not nil, is ffmpeg's own rgb24 conversion of frame 0 on a second output
	// (pipe:3), beside the yuv420p frames on stdout: ffmpeg 5.1 writes it after the last frame
	// of stdout, so it proves the conversion of a stream once the stream has ended.
	proof *proof
}

// proof holds the two sides of a first-frame check: ffmpeg's rgb24 of frame 0 (rgb, complete
// once done is closed) and frame 0 as ffmpeg sent it in yuv420p (first, kept by read). The
// reading of rgb waits for its size (size: one rgb24 frame of the probed size, sent once the
// probe has answered), so that a file whose frames are not the size it announces cannot make
// the reader hold more than that.
type proof struct {
	size  chan int
	done  chan struct{}
	rgb   []byte
	first []byte
}

// expect tells the proof how many bytes make a whole frame; only the first call counts.
func (p *proof) expect(n int) {
	select {
	case p.size <- n:
	default:
	}
}

// OpenFrames starts decoding path. It asks ffprobe for the frame size (and the frame count the
// container lists), then starts ffmpeg; read the frames with Next and always Close the reader.
// A missing, empty or unreadable file, or one without a picture, is an error naming it.
func (t Tools) OpenFrames(ctx context.Context, path string) (*FrameReader, error) {
	return t.OpenFramesWith(ctx, path, DecodeOptions{})
}

// DecodeOptions tunes how a FrameReader's ffmpeg decodes; the zero value is ffmpeg's default.
type DecodeOptions struct {
	// Threads is the decoder's thread count (ffmpeg's input -threads); 0 lets ffmpeg choose,
	// one per core. Several decoders at once on few cores spend less CPU with fewer threads
	// each (frame threading costs about 20% more CPU on H.264; docs/performance.md); the frames
	// are the same whatever the count.
	Threads int
	// Whole says that the caller reads every frame, to io.EOF (or gives up on an error). Such
	// a reader starts ffmpeg beside ffprobe rather than after it, on the yuv420p path, and may
	// take that path before this process has proven that converting yuv420p here gives
	// ffmpeg's rgb24: the proof then comes at the end of the stream, and a stream whose proof
	// fails ends with ErrYUVDiffers instead of io.EOF (read it again: the next reader takes
	// ffmpeg's rgb24). A reader that may stop early leaves Whole false.
	Whole bool
	// noYUV turns the yuv420p path off: ffmpeg's rgb24 only (tests compare both paths).
	noYUV bool
}

// ErrYUVDiffers is returned (wrapped) by a Whole FrameReader, at the end of the stream, when
// converting its yuv420p frames here did not give ffmpeg's own rgb24 of frame 0: every frame it
// returned is suspect. The verdict is remembered for the process, so decoding the file again
// takes ffmpeg's rgb24 path and gives the right frames.
var ErrYUVDiffers = errors.New("converting yuv420p here differs from ffmpeg's rgb24; decode again")

// yuvVerdicts holds, for the process, what the first-frame proofs said of a set of constants
// (yuvCoeffs → bool): true once a stream converted as ffmpeg does, false once one did not.
var yuvVerdicts sync.Map

// verdict returns what this process knows of c: proven, and whether anything is known.
func verdict(c yuvCoeffs) (proven, known bool) {
	v, ok := yuvVerdicts.Load(c)
	if !ok {
		return false, false
	}
	return v.(bool), true
}

// disproven says whether a set of constants failed its proof in this process. Then ffmpeg is
// not the one the conversion here was written against, the other sets most likely fail too,
// and a decoder started early on the yuv420p path would only be stopped again.
func disproven() bool {
	found := false
	yuvVerdicts.Range(func(_, v any) bool {
		found = !v.(bool)
		return !found
	})
	return found
}

// OpenFramesWith is OpenFrames with decode options.
func (t Tools) OpenFramesWith(ctx context.Context, path string, opts DecodeOptions) (*FrameReader, error) {
	if err := checkFile("decode", path); err != nil {
		return nil, err
	}
	r := &FrameReader{parent: ctx, tools: t.resolved(), path: path, threads: max(opts.Threads, 0)}
	vector := yuvVector() && !opts.noYUV
	// A whole read starts decoding at once, in yuv420p with the proof beside it, so that
	// ffmpeg's start (about 80 ms of dynamic linking) overlaps ffprobe's: most videos are
	// yuv420p, and this decoder is kept unless the probe says otherwise (or a proof already
	// failed in this process). It fails quietly: the probe or the decoder started after it
	// says what is wrong.
	var early *decoder
	if opts.Whole && vector && !disproven() {
		early, _ = r.launch(true, true)
	}
	hdr, err := t.probeHeader(ctx, path)
	if err != nil {
		early.stop()
		return nil, err
	}
	r.w, r.h, r.listed, r.hdr = hdr.Width, hdr.Height, hdr.Frames, hdr
	r.audioRate, r.audioChannels = hdr.AudioRate, hdr.AudioChannels
	coef, ok := yuvEligible(hdr.PixFmt, hdr.ColorSpace, hdr.ColorRange, hdr.Width, hdr.Height)
	ok = ok && vector
	proven, known := verdict(coef)
	if ok && early != nil && (proven || !known) && !hdr.Turned {
		r.d = early
		early.proof.expect(3 * r.w * r.h)
	} else {
		early.stop()
		if r.d, err = r.launch(ok && proven, false); err != nil {
			return nil, err
		}
	}
	if r.d.yuv {
		r.yuv, r.coef = make([]byte, r.w*r.h*3/2), coef
	}
	return r, nil
}

// probeHeader runs ffprobe for what OpenFrames needs to know before the first frame.
func (t Tools) probeHeader(ctx context.Context, path string) (FrameHeader, error) {
	// Every stream, not just the picture: the audio stream's header comes with it, so that a
	// caller need not run ffprobe again to learn whether there is audio.
	// The rate, duration and container too: with them the reader says all that Probe would
	// (Info), the frames being counted as they decode, so a file is never decoded only to be
	// counted. The side data for the rotation ffmpeg applies (probeStream.turn).
	stdout, stderr, err := t.ffprobe(
		ctx,
		"decode",
		path,
		"-show_entries",
		"stream=codec_type,codec_name,width,height,nb_frames,pix_fmt,color_space,color_range,sample_rate,channels,avg_frame_rate,r_frame_rate,"+
			"duration:stream_disposition=attached_pic:stream_side_data_list:format=format_name,duration",
	)
	if err != nil {
		return FrameHeader{}, err
	}
	hdr, err := ParseFrameHeader(stdout)
	if err != nil {
		return FrameHeader{}, probeFailed("decode", path, err, stderr)
	}
	return hdr, nil
}

// launch starts ffmpeg sending rgb24 frames on stdout; with yuv, yuv420p frames instead, and
// with withProof (only with yuv) also ffmpeg's own rgb24 of frame 0 on pipe:3.
func (r *FrameReader) launch(yuv, withProof bool) (*decoder, error) {
	ctx, cancel := context.WithCancel(r.parent)
	d := &decoder{yuv: yuv, cancel: cancel, stderr: &proc.Tail{N: 8 << 10}}
	passthrough := r.tools.passthrough
	out := func(format, pixFmt, to string, extra ...string) []string {
		return append(append(append([]string{"-map", "0:V:0"}, passthrough...), extra...), "-f", format, "-pix_fmt", pixFmt, to)
	}
	args := []string{"-hide_banner", "-nostdin", "-loglevel", "error"}
	if r.threads > 0 {
		args = append(args, "-threads", strconv.Itoa(r.threads))
	}
	if !r.hdr.Turned { // the early decoder too: it starts before the probe, and is dropped for a turned stream
		args = append(args, "-noautorotate")
	}
	args = append(args, "-i", fileArg(r.path))
	if yuv {
		args = append(args, out("yuv4mpegpipe", "yuv420p", "pipe:1")...) // y4m.go: why not rawvideo
	} else {
		args = append(args, out("rawvideo", "rgb24", "pipe:1")...)
	}
	var pw *os.File
	if withProof {
		// trim, not -frames:v alone: ffmpeg 5.1 would convert every later frame to rgb24 for
		// an output it has finished (0.1 s of CPU for 97 frames of 720p); trim drops them
		// before the conversion.
		args = append(args, out("rawvideo", "rgb24", "pipe:3", "-vf", "trim=end_frame=1", "-frames:v", "1")...)
		pr, w, err := os.Pipe()
		if err != nil {
			cancel()
			return nil, fmt.Errorf("decode %s: %w", r.path, err)
		}
		pw, d.proof = w, &proof{size: make(chan int, 1), done: make(chan struct{})}
		go func() {
			defer close(d.proof.done)
			defer pr.Close() //nolint:errcheck // the read end: nothing written to lose
			// ffmpeg writes one frame here, at the end; one byte more than a frame is enough
			// to tell a broken one, and the rest is read only to let ffmpeg end cleanly.
			d.proof.rgb, _ = io.ReadAll(io.LimitReader(pr, int64(<-d.proof.size)+1))
			_, _ = io.Copy(io.Discard, pr)
		}()
	}
	d.cmd = r.tools.command(ctx, "ffmpeg", args...)
	d.cmd.Stderr = d.stderr
	if pw != nil {
		d.cmd.ExtraFiles = []*os.File{pw}
	}
	var err error
	if d.stdout, err = d.cmd.StdoutPipe(); err == nil {
		err = d.cmd.Start()
	}
	if pw != nil {
		_ = pw.Close() // the child holds its own copy; ours only has to go for ReadAll to end
	}
	if err != nil {
		cancel()
		if d.proof != nil {
			d.proof.expect(0) // no ffmpeg: its reader ends at once
		}
		return nil, fmt.Errorf("decode %s: ffmpeg: %w", r.path, err)
	}
	setPipeSize(d.stdout, 1<<20)
	if yuv {
		d.y4m = newY4MReader(d.stdout)
	}
	return d, nil
}

// Size returns the frame size in pixels; every frame has 3·w·h bytes.
func (r *FrameReader) Size() (w, h int) { return r.w, r.h }

// Frames returns how many frames Next has returned so far; after io.EOF, the exact frame count.
func (r *FrameReader) Frames() int { return r.n }

// Listed returns the frame count the container announces, 0 when it does not say.
func (r *FrameReader) Listed() int { return r.listed }

// Audio returns the sample rate and channel count of the file's first audio stream, as the
// probe that opened the reader saw them; 0, 0 when the file has no audio.
func (r *FrameReader) Audio() (rate, channels int) { return r.audioRate, r.audioChannels }

// Info returns what the file holds, as Probe says it, with Frames the frames decoded so far:
// after Next returned io.EOF, the exact count (what Probe's -count_frames decode would have
// found), and Warnings ffmpeg's.
func (r *FrameReader) Info() Info {
	h := r.hdr
	info := Info{Format: h.Format, Codec: h.Codec, Width: h.Width, Height: h.Height, Frames: r.n, Warnings: r.warn}
	if !isImageFormat(h.Format) {
		info.FPS, info.DurationS = h.FPS, h.DurationS
	}
	if h.AudioRate > 0 {
		info.Audio = &AudioInfo{Codec: h.AudioCodec, SampleRate: h.AudioRate, Channels: h.AudioChannels, DurationS: h.AudioDurationS}
	}
	return info
}

// Warnings returns the errors ffmpeg printed while decoding a stream it could still read
// (concealed damage, for instance); known once Next returned io.EOF.
func (r *FrameReader) Warnings() []string { return r.warn }

// Next fills dst (3·w·h bytes) with the next frame. It returns io.EOF after the last one. A
// stream that ends inside a frame, holds fewer frames than its container lists, or makes ffmpeg
// fail is an error that names the file and the frame index (0-based).
func (r *FrameReader) Next(dst []byte) error {
	if r.err != nil {
		return r.err
	}
	if len(dst) != 3*r.w*r.h {
		return fmt.Errorf("decode %s: frame buffer of %d bytes, want %d (%dx%d rgb24)", r.path, len(dst), 3*r.w*r.h, r.w, r.h)
	}
	if r.yuv == nil {
		return r.read(dst)
	}
	if err := r.read(r.yuv); err != nil {
		return err
	}
	yuv420ToRGBFast(dst, r.yuv, r.w, r.h, &r.coef)
	return nil
}

// RawFormat is the form in which a FrameReader receives its frames from ffmpeg: yuv420p planes
// (1.5 bytes a pixel), converted to rgb24 in Go, or rgb24 converted by ffmpeg. Keeping frames
// in this form rather than as rgb24 halves the memory of yuv420p videos.
type RawFormat struct {
	w, h int
	yuv  bool
	coef yuvCoeffs
}

// Size returns the number of bytes of one raw frame.
func (f RawFormat) Size() int {
	if f.yuv {
		return f.w * f.h * 3 / 2
	}
	return 3 * f.w * f.h
}

// RGB returns a raw frame as packed rgb24, exactly as Next would have: raw itself when the
// frames travel as rgb24, else raw converted into dst (3·w·h bytes).
func (f RawFormat) RGB(dst, raw []byte) []byte {
	if !f.yuv {
		return raw
	}
	yuv420ToRGBFast(dst, raw, f.w, f.h, &f.coef)
	return dst
}

// Format returns the form of the frames NextRaw returns; it never changes.
func (r *FrameReader) Format() RawFormat {
	return RawFormat{w: r.w, h: r.h, yuv: r.yuv != nil, coef: r.coef}
}

// NextRaw fills dst (Format().Size() bytes) with the next frame as ffmpeg sent it; convert it
// with RawFormat.RGB. It ends and fails as Next does.
func (r *FrameReader) NextRaw(dst []byte) error {
	if r.err != nil {
		return r.err
	}
	if f := r.Format(); len(dst) != f.Size() {
		return fmt.Errorf("decode %s: raw frame buffer of %d bytes, want %d", r.path, len(dst), f.Size())
	}
	return r.read(dst)
}

// read fills buf with the next frame from ffmpeg's output.
func (r *FrameReader) read(buf []byte) error {
	var src io.Reader = r.d.stdout
	if r.d.y4m != nil {
		switch err := r.d.y4m.next(r.w, r.h); {
		case errors.Is(err, io.EOF):
			r.err = r.finish(nil)
		case errors.Is(err, io.ErrUnexpectedEOF):
			r.err = r.finish(fmt.Errorf("frame %d is cut short (in its FRAME line)", r.n))
		case err != nil: // ffmpeg still writes what this reader cannot take: stop it first
			r.d.stop()
			r.err = fmt.Errorf("decode %s: frame %d: %w", r.path, r.n, err)
		}
		if r.err != nil {
			return r.err
		}
		src = r.d.y4m.br
	}
	got, err := io.ReadFull(src, buf)
	switch {
	case err == nil:
		if r.n == 0 && r.d.proof != nil {
			r.d.proof.first = bytes.Clone(buf)
		}
		r.n++
		return nil
	case errors.Is(err, io.EOF):
		r.err = r.finish(nil)
	case errors.Is(err, io.ErrUnexpectedEOF):
		r.err = r.finish(fmt.Errorf("frame %d is cut short (%d of %d bytes)", r.n, got, len(buf)))
	default:
		r.err = r.finish(fmt.Errorf("frame %d: %w", r.n, err))
	}
	return r.err
}

// finish waits for ffmpeg after the end of its output and decides what the end means.
func (r *FrameReader) finish(short error) error {
	werr := r.d.cmd.Wait()
	r.d.cancel()
	msg := stderrText(r.d.stderr.Bytes(), r.path)
	r.warn = messages(r.d.stderr.Bytes(), r.path, 8)
	ctxErr := r.parent.Err()
	switch {
	case ctxErr != nil && werr != nil:
		return fmt.Errorf("decode %s: frame %d: %w", r.path, r.n, ctxErr)
	case werr != nil || short != nil:
		what := short
		if what == nil {
			what = fmt.Errorf("frame %d", r.n)
		}
		if msg != "" {
			return fmt.Errorf("decode %s: %w: %w: ffmpeg: %s", r.path, ErrTruncated, what, msg)
		}
		if werr != nil {
			return fmt.Errorf("decode %s: %w: %w: ffmpeg: %w", r.path, ErrTruncated, what, werr)
		}
		return fmt.Errorf("decode %s: %w: %w", r.path, ErrTruncated, what)
	case r.n == 0:
		if msg != "" {
			return fmt.Errorf("decode %s: %w: no frame decodes (ffmpeg: %s)", r.path, ErrTruncated, msg)
		}
		return fmt.Errorf("decode %s: %w: no frame decodes", r.path, ErrTruncated)
	case r.listed > r.n:
		return fmt.Errorf("decode %s: %w: the container lists %d frames, only %d decode (frame %d is missing)", r.path, ErrTruncated, r.listed, r.n, r.n)
	case r.d.proof != nil && !r.prove():
		return fmt.Errorf("decode %s: %w", r.path, ErrYUVDiffers)
	}
	return io.EOF
}

// prove checks frame 0's conversion here against ffmpeg's own and remembers the verdict on
// the constants for the process. A proof that cannot be made (ffmpeg wrote no whole frame)
// counts as a failed one: the file is then decoded again the way that needs no proof.
func (r *FrameReader) prove() bool {
	p := r.d.proof
	<-p.done
	ok := false
	if len(p.first) == r.w*r.h*3/2 && len(p.rgb) == 3*r.w*r.h {
		got := make([]byte, 3*r.w*r.h)
		yuv420ToRGBFast(got, p.first, r.w, r.h, &r.coef)
		ok = bytes.Equal(got, p.rgb)
	}
	p.first, p.rgb = nil, nil
	yuvVerdicts.Store(r.coef, ok)
	return ok
}

// Close stops ffmpeg if it is still running and releases the reader. It never fails: a reader
// closed early is not an error.
func (r *FrameReader) Close() {
	if r.err == nil {
		r.err = fmt.Errorf("decode %s: reader closed", r.path)
		r.d.stop()
	}
}

// stop ends a running ffmpeg; a nil decoder is none.
func (d *decoder) stop() {
	if d == nil {
		return
	}
	d.cancel()
	d.stdout.Close()
	_ = d.cmd.Wait() // killed on purpose: its error would say only that
	if d.proof != nil {
		d.proof.expect(0) // a proof never expected: its reader ends now
		<-d.proof.done
	}
}

// FrameHeader is what ffprobe says about a file's picture stream before decoding it.
type FrameHeader struct {
	Codec         string
	Width, Height int
	// Frames is the count the container lists; 0 when it does not say (images, some formats).
	Frames int
	// Turned says that ffmpeg turns the frames by the stream's display matrix as it decodes
	// them, as OpenCV does (Width and Height are then the turned size). When it is false, the
	// decoder is told to turn nothing (-noautorotate), so that no turn the probe did not see
	// changes the frames' shape.
	Turned bool
	// PixFmt, ColorSpace and ColorRange are ffprobe's names ("yuv420p", "bt709", "tv"); empty
	// when it does not say.
	PixFmt, ColorSpace, ColorRange string
	// AudioRate and AudioChannels describe the first audio stream; 0 when there is none.
	AudioRate, AudioChannels int
	// Format is the container's name (ffprobe's format_name); FPS and DurationS the picture
	// stream's average rate and duration (the container's duration when the stream has none);
	// AudioCodec and AudioDurationS the first audio stream's codec and duration (the
	// container's when the stream has none). Zero when not said.
	Format         string
	FPS, DurationS float64
	AudioCodec     string
	AudioDurationS float64
}

// ParseFrameHeader reads the JSON of `ffprobe -show_entries stream=codec_type,codec_name,width,
// height,nb_frames,pix_fmt,color_space,color_range,sample_rate,channels:stream_disposition=
// attached_pic -of json`. The picture is the first video stream that is not cover art (what
// ffmpeg's -map 0:V:0 takes; a stream without codec_type counts as video). It fails when there
// is no picture stream or its size is unknown or absurd.
func ParseFrameHeader(data []byte) (FrameHeader, error) {
	out, err := parseProbeOutput(data)
	if err != nil {
		return FrameHeader{}, err
	}
	var hdr FrameHeader
	for _, s := range out.Streams {
		if rate, err := strconv.Atoi(s.SampleRate); s.CodecType == "audio" && err == nil && rate > 0 {
			hdr.AudioRate, hdr.AudioChannels = rate, max(s.Channels, 0)
			hdr.AudioCodec, hdr.AudioDurationS = s.CodecName, out.audioDuration(s)
			break
		}
	}
	s, quarters, err := out.picture()
	if err != nil {
		return FrameHeader{}, err
	}
	n, err := parseCount(s.NbFrames)
	if err != nil {
		return FrameHeader{}, fmt.Errorf("nb_frames: %w", err)
	}
	hdr.Codec, hdr.Width, hdr.Height, hdr.Frames, hdr.Turned = s.CodecName, s.Width, s.Height, n, quarters != 0
	hdr.PixFmt, hdr.ColorSpace, hdr.ColorRange = s.PixFmt, s.ColorSpace, s.ColorRange
	hdr.Format = out.Format.FormatName
	hdr.FPS, hdr.DurationS = out.timing(s)
	return hdr, nil
}

// pngMagic starts every PNG file.
var pngMagic = []byte("\x89PNG\r\n\x1a\n")

// DecodeImage returns an image's pixels as packed 8-bit RGB (3·w·h bytes, row after row). PNG
// is decoded in Go, exactly, with alpha dropped (not premultiplied) and 16-bit samples cut to
// their high byte, as PIL's convert("RGB") does; every other format (JPEG, WebP, ...) goes through
// ffmpeg to rgb24, because Go's WebP decoder gets the colour range wrong. For a video it returns
// the first frame.
func (t Tools) DecodeImage(ctx context.Context, path string) (rgb []byte, w, h int, err error) {
	f, err := inputfile.Open(ctx, path)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("decode %s: %w", path, err)
	}
	defer f.Close() //nolint:errcheck // opened read-only: nothing written to lose
	var magic [8]byte
	n, err := io.ReadFull(f, magic[:])
	if n == 0 {
		if errors.Is(err, io.EOF) {
			return nil, 0, 0, fmt.Errorf("decode %s: empty file", path)
		}
		return nil, 0, 0, fmt.Errorf("decode %s: %w", path, err)
	}
	if n == len(magic) && bytes.Equal(magic[:], pngMagic) {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, 0, 0, fmt.Errorf("decode %s: %w", path, err)
		}
		cfg, err := png.DecodeConfig(f)
		if err == nil && (cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width > maxPixels/cfg.Height) {
			err = fmt.Errorf("size %dx%d out of range", cfg.Width, cfg.Height)
		}
		if err == nil {
			_, err = f.Seek(0, io.SeekStart)
		}
		var img image.Image
		if err == nil {
			img, err = png.Decode(f)
		}
		if err != nil {
			return nil, 0, 0, fmt.Errorf("decode %s: png: %w", path, err)
		}
		b := img.Bounds()
		return rgbOf(img), b.Dx(), b.Dy(), nil
	}
	_ = f.Close() // read-only; ffmpeg opens the file again itself
	r, err := t.OpenFrames(ctx, path)
	if err != nil {
		return nil, 0, 0, err
	}
	defer r.Close()
	w, h = r.Size()
	rgb = make([]byte, 3*w*h)
	if err := r.Next(rgb); err != nil {
		if errors.Is(err, io.EOF) {
			err = fmt.Errorf("decode %s: %w: no frame decodes", path, ErrTruncated)
		}
		return nil, 0, 0, err
	}
	return rgb, w, h, nil
}

// rgbOf converts a decoded PNG to packed RGB without premultiplying alpha.
func rgbOf(img image.Image) []byte {
	r := img.Bounds()
	out := make([]byte, 0, 3*r.Dx()*r.Dy())
	switch m := img.(type) {
	case *image.NRGBA:
		for y := r.Min.Y; y < r.Max.Y; y++ {
			row := m.Pix[m.PixOffset(r.Min.X, y):m.PixOffset(r.Max.X, y)]
			for x := 0; x+3 < len(row); x += 4 {
				out = append(out, row[x], row[x+1], row[x+2])
			}
		}
		return out
	case *image.Gray:
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for _, v := range m.Pix[m.PixOffset(r.Min.X, y):m.PixOffset(r.Max.X, y)] {
				out = append(out, v, v, v)
			}
		}
		return out
	case *image.RGBA:
		opaque := true
		for i := 3; i < len(m.Pix); i += 4 {
			opaque = opaque && m.Pix[i] == 0xff
		}
		if opaque {
			for y := r.Min.Y; y < r.Max.Y; y++ {
				row := m.Pix[m.PixOffset(r.Min.X, y):m.PixOffset(r.Max.X, y)]
				for x := 0; x+3 < len(row); x += 4 {
					out = append(out, row[x], row[x+1], row[x+2])
				}
			}
			return out
		}
	}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			out = append(out, c.R, c.G, c.B)
		}
	}
	return out
}
