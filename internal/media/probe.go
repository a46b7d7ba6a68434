package media

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/diffusion-check/diffusion-check/internal/proc"
)

// Info is what ffprobe says a media file holds.
type Info struct {
	// Format is ffprobe's format name, e.g. "png_pipe", "image2", "mov,mp4,m4a,3gp,3g2,mj2".
	Format string
	// Codec is the video/image codec name: png, mjpeg, webp, h264, ...
	Codec         string
	Width, Height int
	// Frames is the exact number of decoded frames (1 for an image).
	Frames int
	// FPS is the average frame rate; 0 for a still image.
	FPS float64
	// DurationS is the video stream's duration (the container's when the stream has none);
	// 0 for a still image.
	DurationS float64
	// Audio describes the first audio stream; nil when there is none.
	Audio *AudioInfo
	// Warnings are the errors ffprobe printed while decoding a file it could still read
	// (e.g. "overread 8" for a truncated JPEG). They are data, not a failure: the caller decides.
	Warnings []string
}

// AudioInfo describes an audio stream.
type AudioInfo struct {
	Codec      string
	SampleRate int // Hz
	Channels   int
	DurationS  float64
}

// Still reports whether the file is a still image rather than a video: a single frame in an
// image container (ffprobe's "image2" or one of its "*_pipe" formats).
func (i Info) Still() bool { return isImageFormat(i.Format) }

func isImageFormat(format string) bool {
	return format == "image2" || strings.HasSuffix(format, "_pipe")
}

// Probe runs ffprobe on path and returns what the file holds, counting its frames by decoding
// them. A file ffprobe cannot read, one without a video or image stream, one whose frames do
// not decode, or one with fewer decodable frames than its container lists (a truncated MP4) is
// an error that names the file and quotes ffprobe.
func (t Tools) Probe(ctx context.Context, path string) (Info, error) {
	if err := checkFile("probe", path); err != nil {
		return Info{}, err
	}
	stdout, stderr, err := t.ffprobe(ctx, "probe", path, "-count_frames", "-show_streams", "-show_format")
	if err != nil {
		return Info{}, err
	}
	info, err := ParseProbe(stdout)
	if err != nil {
		return Info{}, probeFailed("probe", path, err, stderr)
	}
	info.Warnings = messages(stderr, path, 8)
	return info, nil
}

// checkFile fails, naming the work and the file, when path is missing or empty: ffprobe's own
// message for an empty file ("Invalid data found when processing input") says less.
func checkFile(what, path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, path, err)
	}
	if st.Size() == 0 {
		return fmt.Errorf("%s %s: empty file", what, path)
	}
	return nil
}

// ffprobe is the one place that runs ffprobe: `ffprobe -v error ARGS -of json PATH`. It returns
// the JSON and the tail of ffprobe's messages; a failed run is an error naming the work (what),
// the file and quoting ffprobe.
func (t Tools) ffprobe(ctx context.Context, what, path string, args ...string) (stdout, stderr []byte, err error) {
	var out bytes.Buffer
	msgs := &proc.Tail{N: 8 << 10}
	cmd := t.command(ctx, "ffprobe", append(append([]string{"-v", "error"}, args...), "-of", "json", fileArg(path))...)
	cmd.Stdout = &out
	cmd.Stderr = msgs
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("%s %s: %w", what, path, ctx.Err())
		}
		if msg := stderrText(msgs.Bytes(), path); msg != "" {
			return nil, nil, fmt.Errorf("%s %s: ffprobe: %s", what, path, msg)
		}
		return nil, nil, fmt.Errorf("%s %s: ffprobe: %w", what, path, err)
	}
	return out.Bytes(), msgs.Bytes(), nil
}

// probeFailed is the error for ffprobe output that could not be read: it names the work and
// the file, and quotes what ffprobe printed, which usually says why.
func probeFailed(what, path string, err error, stderr []byte) error {
	if msg := stderrText(stderr, path); msg != "" {
		return fmt.Errorf("%s %s: %w (ffprobe: %s)", what, path, err, msg)
	}
	return fmt.Errorf("%s %s: %w", what, path, err)
}

// fileArg keeps a path that starts with "-" from being read as an option.
func fileArg(path string) string {
	if strings.HasPrefix(path, "-") {
		return "./" + path
	}
	return path
}

// ErrNoVideo is returned (wrapped) by ParseProbe and Probe for a file without a video or image stream.
var ErrNoVideo = errors.New("no video or image stream")

// ErrTruncated is returned (wrapped) by ParseProbe and Probe when fewer frames decode than the
// container lists, or none at all.
var ErrTruncated = errors.New("truncated or corrupt")

// probeStream is one stream of ffprobe's JSON, whether asked with -show_streams (Probe) or
// -show_entries (OpenFrames, AudioStream): the fields a query did not ask for stay zero.
// ffprobe writes numbers as JSON strings in some fields and as numbers in others.
type probeStream struct {
	CodecType    string `json:"codec_type"`
	CodecName    string `json:"codec_name"`
	Width        int    `json:"width"`
	Height       int    `json:"height"`
	NbFrames     string `json:"nb_frames"`
	NbReadFrames string `json:"nb_read_frames"`
	PixFmt       string `json:"pix_fmt"`
	ColorSpace   string `json:"color_space"`
	ColorRange   string `json:"color_range"`
	AvgFrameRate string `json:"avg_frame_rate"`
	RFrameRate   string `json:"r_frame_rate"`
	Duration     string `json:"duration"`
	SampleRate   string `json:"sample_rate"`
	Channels     int    `json:"channels"`
	Disposition  struct {
		AttachedPic int `json:"attached_pic"`
	} `json:"disposition"`
	// SideData is the stream's side data (side_data_list): a display matrix among it carries
	// the rotation, ffprobe's angle counterclockwise, that ffmpeg applies on decode.
	SideData []struct {
		Rotation *float64 `json:"rotation"`
	} `json:"side_data_list"`
}

// probeOutput is ffprobe's JSON: its streams and its container.
type probeOutput struct {
	Streams []probeStream `json:"streams"`
	Format  struct {
		FormatName string `json:"format_name"`
		Duration   string `json:"duration"`
	} `json:"format"`
}

// parseProbeOutput decodes ffprobe's JSON.
func parseProbeOutput(data []byte) (probeOutput, error) {
	var out probeOutput
	if err := json.Unmarshal(data, &out); err != nil {
		return probeOutput{}, fmt.Errorf("reading ffprobe output: %w", err)
	}
	return out, nil
}

// picture returns the picture stream: the first video stream that is not cover art (what
// ffmpeg's -map 0:V:0 takes; a stream without codec_type counts as video), with the size its
// frames decode to, and by how many quarters ffmpeg turns them (turn): Height×Width for a
// stream turned by 90° or 270°. It fails when there is none, its size is unknown or absurd, or
// its rotation is not a multiple of 90°.
func (o probeOutput) picture() (probeStream, int, error) {
	for _, s := range o.Streams {
		if (s.CodecType == "video" || s.CodecType == "") && s.Disposition.AttachedPic == 0 {
			if s.Width <= 0 || s.Height <= 0 || s.Width > maxPixels/s.Height {
				return probeStream{}, 0, fmt.Errorf("%w: %s stream has no usable size (%dx%d)", ErrTruncated, s.CodecName, s.Width, s.Height)
			}
			if isImageFormat(o.Format.FormatName) {
				// SGLang reads an image with PIL, which turns nothing.
				return s, 0, nil
			}
			quarters, err := s.turn()
			if err != nil {
				return probeStream{}, 0, err
			}
			if quarters%2 == 1 {
				s.Width, s.Height = s.Height, s.Width
			}
			return s, quarters, nil
		}
	}
	return probeStream{}, 0, ErrNoVideo
}

// turn returns by how many quarters (0 to 3, clockwise) ffmpeg turns the stream's frames as it
// decodes them. ffmpeg turns every frame by the display matrix's angle (its autorotation:
// get_rotation in fftools/cmdutils.c, transpose for a quarter, both flips for a half, 4.x
// through 7.x), and so does OpenCV, whose VideoCapture SGLang reads videos with
// (CAP_PROP_ORIENTATION_AUTO, on by default: CvCapture_FFMPEG::init in cap_ffmpeg_impl.hpp).
// An angle that is not within 1° of a multiple of 90° is an error: ffmpeg would turn the
// picture inside its frame (the rotate filter) where OpenCV leaves it as it is, and neither
// is the picture the other sees.
func (s probeStream) turn() (int, error) {
	for _, d := range s.SideData {
		if d.Rotation == nil {
			continue
		}
		// ffprobe's angle is counterclockwise; ffmpeg turns clockwise by its negation.
		theta := math.Mod(-*d.Rotation, 360)
		if theta < 0 {
			theta += 360
		}
		quarters := math.Round(theta / 90)
		if math.Abs(theta-90*quarters) >= 1 {
			return 0, fmt.Errorf("%s stream is to be shown turned by %g°, not a multiple of 90°: "+
				"ffmpeg would turn the picture inside its frame, SGLang's reader (OpenCV) would not turn it", s.CodecName, theta)
		}
		return int(quarters) % 4, nil
	}
	return 0, nil
}

// timing returns a picture stream's average frame rate (else its base rate) and its duration
// (else the container's).
func (o probeOutput) timing(s probeStream) (fps, durationS float64) {
	fps, durationS = parseRate(s.AvgFrameRate), parseSeconds(s.Duration)
	if fps == 0 {
		fps = parseRate(s.RFrameRate)
	}
	if durationS == 0 {
		durationS = parseSeconds(o.Format.Duration)
	}
	return fps, durationS
}

// audioDuration is an audio stream's duration, else the container's, as SGLang's
// probe_audio_stream reads it.
func (o probeOutput) audioDuration(s probeStream) float64 {
	if d := parseSeconds(s.Duration); d > 0 {
		return d
	}
	return parseSeconds(o.Format.Duration)
}

// ParseProbe reads the JSON that `ffprobe -count_frames -show_streams -show_format -of json`
// prints. The picture is chosen as probeOutput.picture does; the first audio stream is the
// audio. It fails when there is no picture, its size is unknown, or its frames did not decode.
func ParseProbe(data []byte) (Info, error) {
	out, err := parseProbeOutput(data)
	if err != nil {
		return Info{}, err
	}
	info := Info{Format: out.Format.FormatName}
	for _, s := range out.Streams {
		if s.CodecType == "audio" {
			a := &AudioInfo{Codec: s.CodecName, Channels: s.Channels, DurationS: out.audioDuration(s)}
			a.SampleRate, _ = strconv.Atoi(s.SampleRate)
			info.Audio = a
			break
		}
	}
	v, _, err := out.picture()
	if err != nil {
		return Info{}, err
	}
	info.Codec, info.Width, info.Height = v.CodecName, v.Width, v.Height
	// ffprobe leaves nb_read_frames out when no frame decoded.
	read, err := parseCount(v.NbReadFrames)
	if err != nil {
		return Info{}, fmt.Errorf("nb_read_frames: %w", err)
	}
	if read == 0 {
		return Info{}, fmt.Errorf("%w: no %s frame decodes", ErrTruncated, v.CodecName)
	}
	if listed, err := parseCount(v.NbFrames); err == nil && listed > read {
		return Info{}, fmt.Errorf("%w: the container lists %d frames, only %d decode", ErrTruncated, listed, read)
	}
	info.Frames = read
	if !isImageFormat(info.Format) {
		info.FPS, info.DurationS = out.timing(v)
	}
	return info, nil
}

// parseCount reads a frame count; ffprobe writes it as a string, or not at all (0).
func parseCount(s string) (int, error) {
	if s == "" || s == "N/A" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad count %q", s)
	}
	return n, nil
}

// parseRate reads ffprobe's "30000/1001"; "0/0", "N/A" and garbage are 0.
func parseRate(s string) float64 {
	num, den, ok := strings.Cut(s, "/")
	if !ok {
		return parseSeconds(s)
	}
	n, err1 := strconv.ParseFloat(num, 64)
	d, err2 := strconv.ParseFloat(den, 64)
	if err1 != nil || err2 != nil || d == 0 || !finite(n/d) || n/d < 0 {
		return 0
	}
	return n / d
}

// parseSeconds reads a duration in seconds; "N/A", negatives and garbage are 0.
func parseSeconds(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !finite(v) || v < 0 {
		return 0
	}
	return v
}

func finite(v float64) bool { return v-v == 0 }
