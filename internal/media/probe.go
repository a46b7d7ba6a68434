package media

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
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
func Probe(ctx context.Context, path string) (Info, error) {
	st, err := os.Stat(path)
	if err != nil {
		return Info{}, fmt.Errorf("probe %s: %w", path, err)
	}
	if st.Size() == 0 {
		return Info{}, fmt.Errorf("probe %s: empty file", path)
	}
	var stdout bytes.Buffer
	stderr := &tail{n: 8 << 10}
	cmd := command(ctx, "ffprobe", "-v", "error", "-count_frames", "-show_streams", "-show_format", "-of", "json", fileArg(path))
	cmd.Stdout = &stdout
	cmd.Stderr = stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return Info{}, fmt.Errorf("probe %s: %w", path, ctx.Err())
		}
		if msg := stderrText(stderr.Bytes(), path); msg != "" {
			return Info{}, fmt.Errorf("probe %s: ffprobe: %s", path, msg)
		}
		return Info{}, fmt.Errorf("probe %s: ffprobe: %w", path, err)
	}
	info, err := ParseProbe(stdout.Bytes())
	if err != nil {
		if msg := stderrText(stderr.Bytes(), path); msg != "" {
			return Info{}, fmt.Errorf("probe %s: %w (ffprobe: %s)", path, err, msg)
		}
		return Info{}, fmt.Errorf("probe %s: %w", path, err)
	}
	info.Warnings = messages(stderr.Bytes(), path, 8)
	return info, nil
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

// probeOutput is the part of `ffprobe -show_streams -show_format -of json` that Probe reads.
// ffprobe writes numbers as JSON strings in some fields and as numbers in others.
type probeOutput struct {
	Streams []struct {
		CodecType    string `json:"codec_type"`
		CodecName    string `json:"codec_name"`
		Width        int    `json:"width"`
		Height       int    `json:"height"`
		NbFrames     string `json:"nb_frames"`
		NbReadFrames string `json:"nb_read_frames"`
		AvgFrameRate string `json:"avg_frame_rate"`
		RFrameRate   string `json:"r_frame_rate"`
		Duration     string `json:"duration"`
		SampleRate   string `json:"sample_rate"`
		Channels     int    `json:"channels"`
		Disposition  struct {
			AttachedPic int `json:"attached_pic"`
		} `json:"disposition"`
	} `json:"streams"`
	Format struct {
		FormatName string `json:"format_name"`
		Duration   string `json:"duration"`
	} `json:"format"`
}

// ParseProbe reads the JSON that `ffprobe -count_frames -show_streams -show_format -of json`
// prints. The first video stream that is not cover art is the picture; the first audio stream
// is the audio. It fails when there is no such video stream, its size is unknown, or its frames
// did not decode.
func ParseProbe(data []byte) (Info, error) {
	var out probeOutput
	if err := json.Unmarshal(data, &out); err != nil {
		return Info{}, fmt.Errorf("reading ffprobe output: %w", err)
	}
	info := Info{Format: out.Format.FormatName}
	video := -1
	for i, s := range out.Streams {
		switch {
		case s.CodecType == "video" && s.Disposition.AttachedPic == 0 && video < 0:
			video = i
		case s.CodecType == "audio" && info.Audio == nil:
			a := &AudioInfo{Codec: s.CodecName, Channels: s.Channels}
			a.SampleRate, _ = strconv.Atoi(s.SampleRate)
			a.DurationS = parseSeconds(s.Duration)
			info.Audio = a
		}
	}
	if info.Audio != nil && info.Audio.DurationS == 0 {
		// SGLang's probe_audio_stream: the stream's duration, else the container's.
		info.Audio.DurationS = parseSeconds(out.Format.Duration)
	}
	if video < 0 {
		return Info{}, ErrNoVideo
	}
	v := out.Streams[video]
	info.Codec = v.CodecName
	info.Width, info.Height = v.Width, v.Height
	if info.Width <= 0 || info.Height <= 0 {
		return Info{}, fmt.Errorf("%w: %s stream has no size (%dx%d)", ErrTruncated, v.CodecName, v.Width, v.Height)
	}
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
		info.FPS = parseRate(v.AvgFrameRate)
		if info.FPS == 0 {
			info.FPS = parseRate(v.RFrameRate)
		}
		info.DurationS = parseSeconds(v.Duration)
		if info.DurationS == 0 {
			info.DurationS = parseSeconds(out.Format.Duration)
		}
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
