package media

import (
	"bytes"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/diffusion-check/diffusion-check/internal/media/mediatest"
)

// testVideo writes a w×h video of n frames whose frame i is a gradient shifted by i.
func testVideo(t *testing.T, name string, w, h, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	err := OnPath().EncodeVideo(t.Context(), path, w, h, n, 8, func(i int, rgb []byte) {
		for p := range w * h {
			x, y := p%w, p/w
			rgb[3*p], rgb[3*p+1], rgb[3*p+2] = byte(4*x+8*i), byte(4*y), byte(100+i)
		}
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// readAll decodes every frame of path and returns what the reader then says of the file.
func readAll(t *testing.T, path string) (Info, error) {
	t.Helper()
	return readAllWith(t, path, DecodeOptions{Whole: true})
}

// readAllWith is readAll with decode options.
func readAllWith(t *testing.T, path string, opts DecodeOptions) (Info, error) {
	t.Helper()
	r, err := OnPath().OpenFramesWith(t.Context(), path, opts)
	if err != nil {
		return Info{}, err
	}
	defer r.Close()
	w, h := r.Size()
	buf := make([]byte, 3*w*h)
	for {
		if err := r.Next(buf); err != nil {
			if errors.Is(err, io.EOF) {
				return r.Info(), nil
			}
			return r.Info(), err
		}
	}
}

// TestFrameReaderInfoIsProbe: what a FrameReader says of a file once it has decoded it (its
// probe's header plus the frames it counted) is what Probe says with its -count_frames decode,
// so the runner's output check can take it from the one decode that also feeds the comparison.
func TestFrameReaderInfoIsProbe(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	withAudio := filepath.Join(t.TempDir(), "va.mp4")
	tone := &ToneSpec{Tones: []Tone{{FreqHz: 440, Amplitude: 0.3}}}
	if err := OnPath().EncodeVideo(t.Context(), withAudio, 64, 48, 12, 24, func(int, []byte) {}, tone); err != nil {
		t.Fatal(err)
	}
	png := filepath.Join(t.TempDir(), "x.png")
	data, err := EncodePNG(image.NewRGBA(image.Rect(0, 0, 40, 30)))
	if err == nil {
		err = os.WriteFile(png, data, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path string }{
		{"video", testVideo(t, "v.mp4", 64, 48, 16)},
		{"video+audio", withAudio},
		{"one frame", testVideo(t, "one.mp4", 32, 32, 1)},
		{"image", png},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := OnPath().Probe(t.Context(), tc.path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readAll(t, tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("FrameReader.Info differs from Probe (-probe +reader):\n%s", diff)
			}
		})
	}
}

func TestFrameReader(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	path := testVideo(t, "v.mp4", 64, 48, 13)
	r, err := OnPath().OpenFrames(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if w, h := r.Size(); w != 64 || h != 48 {
		t.Fatalf("size %dx%d, want 64x48", w, h)
	}
	if err := r.Next(make([]byte, 10)); err == nil || !strings.Contains(err.Error(), "frame buffer of 10 bytes") {
		t.Errorf("short buffer: %v", err)
	}
	buf := make([]byte, 3*64*48)
	var n int
	for ; ; n++ {
		err := r.Next(buf)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("frame %d: %v", n, err)
		}
		// Blue is 100+i everywhere: lossy coding keeps a flat channel within a few levels.
		if b := int(buf[3*(24*64+32)+2]); b < 100+n-6 || b > 100+n+6 {
			t.Errorf("frame %d: blue %d, want about %d", n, b, 100+n)
		}
	}
	if n != 13 || r.Frames() != 13 {
		t.Errorf("read %d frames (Frames() %d), want 13", n, r.Frames())
	}
	if err := r.Next(buf); !errors.Is(err, io.EOF) {
		t.Errorf("after the end: %v, want io.EOF", err)
	}
	r.Close()
}

// TestFrameReaderRaw reads a video's frames raw (as ffmpeg sent them) and converts them: the
// same bytes as Next, on the yuv420p path (where this build has a vector converter) and on the
// rgb24 one.
func TestFrameReaderRaw(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	path := testVideo(t, "v.mp4", 64, 48, 7)
	frames := func(raw, rgbPath bool) (out [][]byte, size int) {
		r, err := OnPath().OpenFramesWith(t.Context(), path, DecodeOptions{Whole: true, noYUV: rgbPath})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		f := r.Format()
		rgb := make([]byte, 3*64*48)
		buf := make([]byte, f.Size())
		if err := r.NextRaw(make([]byte, f.Size()+1)); err == nil || !strings.Contains(err.Error(), "raw frame buffer") {
			t.Errorf("wrong raw buffer: %v", err)
		}
		for {
			var err error
			if raw {
				if err = r.NextRaw(buf); err == nil {
					out = append(out, bytes.Clone(f.RGB(rgb, buf)))
				}
			} else if err = r.Next(rgb); err == nil {
				out = append(out, bytes.Clone(rgb))
			}
			if errors.Is(err, io.EOF) {
				return out, f.Size()
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, rgbPath := range []bool{false, true} {
		want, _ := frames(false, rgbPath)
		got, size := frames(true, rgbPath)
		wantSize := 3 * 64 * 48
		if yuvVector() && !rgbPath {
			wantSize = 64 * 48 * 3 / 2
		}
		if size != wantSize {
			t.Errorf("rgb24 path %v: raw frames of %d bytes, want %d", rgbPath, size, wantSize)
		}
		if len(want) != 7 || len(got) != len(want) {
			t.Fatalf("rgb24 path %v: %d raw frames, %d frames, want 7", rgbPath, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Errorf("rgb24 path %v: frame %d differs between NextRaw and Next", rgbPath, i)
			}
		}
	}
}

// turnedVideo copies a 64×48 video of n frames into one whose display matrix turns it by
// degrees (as a phone's portrait video is stored), and returns its path and ffprobe's rotation
// for it (degrees counterclockwise). It stops the test when the ffmpeg on PATH can write
// neither the rotate tag (FFmpeg 4.x, 5.x) nor -display_rotation (6.0 on).
func turnedVideo(t *testing.T, src string, degrees int) (path string, rotation float64) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "turned.mp4")
	q := []string{"-hide_banner", "-nostdin", "-loglevel", "error", "-y"}
	for _, args := range [][]string{
		{"-i", src, "-c", "copy", "-metadata:s:v:0", "rotate=" + strconv.Itoa(degrees), path},
		{"-display_rotation:v:0", strconv.Itoa(degrees), "-i", src, "-c", "copy", path},
	} {
		if err := exec.Command("ffmpeg", append(q, args...)...).Run(); err != nil {
			continue
		}
		out, err := exec.Command("ffprobe", "-v", "error", "-of", "json", "-show_entries", "stream_side_data_list", path).Output()
		if err != nil {
			t.Fatal(err)
		}
		var probe probeOutput
		if err := json.Unmarshal(out, &probe); err != nil {
			t.Fatal(err)
		}
		for _, s := range probe.Streams {
			for _, d := range s.SideData {
				if d.Rotation != nil && *d.Rotation != 0 {
					return path, *d.Rotation
				}
			}
		}
	}
	t.Fatalf("ffmpeg on PATH wrote no display matrix for %d° with either the rotate tag or -display_rotation", degrees)
	return "", 0
}

// turn returns the w×h rgb24 frame a turned counterclockwise by quarters quarters.
func turn(a []byte, w, h, quarters int) []byte {
	for range (quarters%4 + 4) % 4 {
		out := make([]byte, len(a))
		for y := range h {
			for x := range w {
				// Counterclockwise: the turned frame is h wide and w high.
				o := 3 * ((w-1-x)*h + y)
				copy(out[o:o+3], a[3*(y*w+x):3*(y*w+x)+3])
			}
		}
		a, w, h = out, h, w
	}
	return a
}

// TestFrameReaderTurned: a video whose display matrix turns it by a quarter or a half decodes,
// on both paths, to the frames ffmpeg and OpenCV show: each the unturned frame turned by
// ffprobe's angle, h×w for a quarter. The probe said the coded size before: the rgb24 path
// read a quarter-turned frame as w×h rows, the yuv420p path failed on the yuv4mpeg header.
func TestFrameReaderTurned(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	src := testVideo(t, "v.mp4", 64, 48, 5)
	decode := func(path string, rgbPath bool) (frames [][]byte, w, h int) {
		r, err := OnPath().OpenFramesWith(t.Context(), path, DecodeOptions{Whole: true, noYUV: rgbPath})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		w, h = r.Size()
		for {
			buf := make([]byte, 3*w*h)
			if err := r.Next(buf); errors.Is(err, io.EOF) {
				return frames, w, h
			} else if err != nil {
				t.Fatalf("%s, rgb24 path %v: frame %d: %v", path, rgbPath, len(frames), err)
			}
			frames = append(frames, buf)
		}
	}
	plain := map[bool][][]byte{} // the unturned frames, by path
	for _, rgbPath := range []bool{false, true} {
		plain[rgbPath], _, _ = decode(src, rgbPath)
	}
	for _, degrees := range []int{90, 180} {
		path, rotation := turnedVideo(t, src, degrees)
		quarters := int(math.Round(rotation / 90))
		if math.Abs(rotation-90*float64(quarters)) > 1 || quarters%2 != degrees/90%2 {
			t.Fatalf("%d°: ffprobe says rotation %g", degrees, rotation)
		}
		ww, wh := 64, 48
		if quarters%2 != 0 {
			ww, wh = wh, ww
		}
		for _, rgbPath := range []bool{false, true} {
			got, w, h := decode(path, rgbPath)
			if w != ww || h != wh || len(got) != 5 || len(plain[rgbPath]) != 5 {
				t.Fatalf("%d°, rgb24 path %v: %d frames of %dx%d, want 5 of %dx%d", degrees, rgbPath, len(got), w, h, ww, wh)
			}
			for i := range got {
				// ffprobe's rotation is counterclockwise: the frames are turned that way.
				if want := turn(plain[rgbPath][i], 64, 48, quarters); !bytes.Equal(got[i], want) {
					t.Errorf("%d°, rgb24 path %v: frame %d is not the unturned frame turned by %g° counterclockwise", degrees, rgbPath, i, rotation)
				}
			}
		}
		info, err := OnPath().Probe(t.Context(), path)
		if err != nil || info.Width != ww || info.Height != wh {
			t.Errorf("%d°: Probe: %+v, %v; want %dx%d", degrees, info, err, ww, wh)
		}
	}
}

func TestFrameReaderCloseEarly(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	r, err := OnPath().OpenFrames(t.Context(), testVideo(t, "v.mp4", 64, 48, 40))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Next(make([]byte, 3*64*48)); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if err := r.Next(make([]byte, 3*64*48)); err == nil || errors.Is(err, io.EOF) {
		t.Errorf("Next after Close: %v, want an error", err)
	}
}

func TestFrameReaderBroken(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	good := testVideo(t, "v.mp4", 64, 48, 24)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, path, want string
	}{
		{"zero bytes", write("empty.mp4", nil), "empty file"},
		{"missing", filepath.Join(dir, "nope.mp4"), "no such file"},
		{"garbage", write("junk.mp4", bytes.Repeat([]byte("not a video "), 100)), "junk.mp4"},
		{"truncated", write("cut.mp4", data[:len(data)*2/3]), "cut.mp4"},
		{"text", write("notes.txt", []byte("hello\n")), "notes.txt"},
	} {
		// Both ways of starting: after the probe, and beside it (a whole read).
		for _, whole := range []bool{false, true} {
			info, err := readAllWith(t, tc.path, DecodeOptions{Whole: whole})
			n := info.Frames
			if err == nil {
				t.Errorf("%s (whole %v): read %d frames without an error", tc.name, whole, n)
				continue
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), filepath.Base(tc.path)) {
				t.Errorf("%s (whole %v): error %q does not name the file or say %q", tc.name, whole, err, tc.want)
			}
			if tc.name == "truncated" && !errors.Is(err, ErrTruncated) {
				t.Errorf("truncated (whole %v): %v is not ErrTruncated", whole, err)
			}
		}
	}
}

func TestDecodeImage(t *testing.T) {
	dir := t.TempDir()
	// An NRGBA PNG with translucent pixels: the colour must come back as stored, not premultiplied.
	img := image.NewNRGBA(image.Rect(0, 0, 9, 7))
	for y := range 7 {
		for x := range 9 {
			img.SetNRGBA(x, y, color.NRGBA{uint8(20 * x), uint8(30 * y), 200, uint8(255 - 20*x)})
		}
	}
	pngData, err := EncodePNG(img)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "a.png")
	if err := os.WriteFile(p, pngData, 0o644); err != nil {
		t.Fatal(err)
	}
	rgb, w, h, err := OnPath().DecodeImage(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	if w != 9 || h != 7 || len(rgb) != 3*9*7 {
		t.Fatalf("%dx%d, %d bytes", w, h, len(rgb))
	}
	for y := range 7 {
		for x := range 9 {
			got := rgb[3*(y*9+x) : 3*(y*9+x)+3]
			if want := []byte{uint8(20 * x), uint8(30 * y), 200}; !bytes.Equal(got, want) {
				t.Fatalf("pixel %d,%d: %v, want %v", x, y, got, want)
			}
		}
	}
	// A gray PNG comes back as three equal channels.
	gray := image.NewGray(image.Rect(0, 0, 8, 8))
	for i := range gray.Pix {
		gray.Pix[i] = uint8(i * 3)
	}
	gp := filepath.Join(dir, "g.png")
	gd, _ := EncodePNG(gray)
	if err := os.WriteFile(gp, gd, 0o644); err != nil {
		t.Fatal(err)
	}
	rgb, _, _, err = OnPath().DecodeImage(t.Context(), gp)
	if err != nil || rgb[3*10] != 30 || rgb[3*10+1] != 30 || rgb[3*10+2] != 30 {
		t.Errorf("gray: %v, pixel 10 = %v", err, rgb[30:33])
	}
	for _, tc := range []struct{ name, data, want string }{
		{"empty.png", "", "empty file"},
		{"cut.png", string(pngData[:len(pngData)/2]), "cut.png: png:"},
		{"bad.png", "\x89PNG\r\n\x1a\nnonsense", "bad.png: png:"},
	} {
		p := filepath.Join(dir, tc.name)
		if err := os.WriteFile(p, []byte(tc.data), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := OnPath().DecodeImage(t.Context(), p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

func TestDecodeImageJPEG(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	img := image.NewRGBA(image.Rect(0, 0, 32, 24))
	for i := range img.Pix {
		img.Pix[i] = 128
		if i%4 == 3 {
			img.Pix[i] = 255
		}
	}
	data, err := EncodeJPEG(img, 95)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "a.jpg")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	rgb, w, h, err := OnPath().DecodeImage(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	if w != 32 || h != 24 {
		t.Fatalf("size %dx%d", w, h)
	}
	for i, v := range rgb {
		if v < 125 || v > 131 {
			t.Fatalf("sample %d = %d, want about 128", i, v)
		}
	}
}

func TestParseFrameHeader(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		want       FrameHeader
		err        error
	}{
		{"video and audio, cover art first",
			`{"streams":[{"codec_type":"video","codec_name":"mjpeg","width":64,"height":64,"disposition":{"attached_pic":1}},` +
				`{"codec_type":"audio","codec_name":"aac","sample_rate":"48000","channels":2,"disposition":{"attached_pic":0}},` +
				`{"codec_type":"video","codec_name":"h264","width":1280,"height":720,"nb_frames":"97","pix_fmt":"yuv420p","color_space":"bt709",` +
				`"color_range":"tv","disposition":{"attached_pic":0}}]}`,
			FrameHeader{Codec: "h264", Width: 1280, Height: 720, Frames: 97, PixFmt: "yuv420p", ColorSpace: "bt709", ColorRange: "tv", AudioRate: 48000,
				AudioChannels: 2, AudioCodec: "aac"}, nil},
		{"rates and durations, the container's where a stream has none",
			`{"streams":[{"codec_type":"video","codec_name":"h264","width":64,"height":48,"avg_frame_rate":"0/0","r_frame_rate":"24000/1001"},` +
				`{"codec_type":"audio","codec_name":"aac","sample_rate":"16000","channels":1,"duration":"1.500000"}],` +
				`"format":{"format_name":"mov,mp4","duration":"2.000000"}}`,
			FrameHeader{Codec: "h264", Width: 64, Height: 48, AudioRate: 16000, AudioChannels: 1, AudioCodec: "aac", AudioDurationS: 1.5,
				Format: "mov,mp4", FPS: 24000.0 / 1001, DurationS: 2}, nil},
		{"image", `{"streams":[{"codec_type":"video","codec_name":"png","width":64,"height":48,"pix_fmt":"rgb24"}]}`,
			FrameHeader{Codec: "png", Width: 64, Height: 48, PixFmt: "rgb24"}, nil},
		{"turned a quarter: the decoded size", `{"streams":[{"codec_type":"video","codec_name":"h264","width":64,"height":48,` +
			`"side_data_list":[{"side_data_type":"Mastering display metadata"},{"side_data_type":"Display Matrix","rotation":-90}]}]}`,
			FrameHeader{Codec: "h264", Width: 48, Height: 64, Turned: true}, nil},
		{"turned three quarters", `{"streams":[{"codec_name":"h264","width":64,"height":48,"side_data_list":[{"rotation":270.4}]}]}`,
			FrameHeader{Codec: "h264", Width: 48, Height: 64, Turned: true}, nil},
		{"turned a half: the coded size", `{"streams":[{"codec_name":"h264","width":64,"height":48,"side_data_list":[{"rotation":180}]}]}`,
			FrameHeader{Codec: "h264", Width: 64, Height: 48, Turned: true}, nil},
		{"turned by less than a degree: not turned", `{"streams":[{"codec_name":"h264","width":64,"height":48,"side_data_list":[{"rotation":-0.5}]}]}`,
			FrameHeader{Codec: "h264", Width: 64, Height: 48}, nil},
		{"an image: never turned (PIL, SGLang's image reader, turns nothing)",
			`{"streams":[{"codec_name":"mjpeg","width":64,"height":48,"side_data_list":[{"rotation":90}]}],"format":{"format_name":"jpeg_pipe"}}`,
			FrameHeader{Codec: "mjpeg", Width: 64, Height: 48, Format: "jpeg_pipe"}, nil},
		{"side data without a rotation", `{"streams":[{"codec_name":"h264","width":64,"height":48,"side_data_list":[{"side_data_type":"Spherical"}]}]}`,
			FrameHeader{Codec: "h264", Width: 64, Height: 48}, nil},
		{"audio only", `{"streams":[{"codec_type":"audio","sample_rate":"44100","channels":1}]}`, FrameHeader{}, ErrNoVideo},
		{"cover art only", `{"streams":[{"codec_type":"video","width":8,"height":8,"disposition":{"attached_pic":1}}]}`, FrameHeader{}, ErrNoVideo},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseFrameHeader([]byte(tc.json))
			if !errors.Is(err, tc.err) || got != tc.want {
				t.Errorf("got %+v, %v; want %+v, %v", got, err, tc.want, tc.err)
			}
		})
	}
	// ffmpeg would turn the picture inside its frame, OpenCV not at all: an error, naming the angle.
	_, err := ParseFrameHeader([]byte(`{"streams":[{"codec_name":"h264","width":64,"height":48,"side_data_list":[{"rotation":-45}]}]}`))
	if err == nil || !strings.Contains(err.Error(), "turned by 45°, not a multiple of 90°") {
		t.Errorf("rotation 45°: %v", err)
	}
}

func FuzzParseFrameHeader(f *testing.F) {
	f.Add([]byte(`{"programs":[],"streams":[{"codec_name":"h264","width":1280,"height":720,"nb_frames":"97"}]}`))
	f.Add([]byte(`{"streams":[{"codec_name":"png","width":64,"height":48}]}`))
	f.Add([]byte(`{"streams":[{"codec_name":"h264","width":64,"height":48,"nb_frames":"N/A"}]}`))
	f.Add([]byte(`{"streams":[{"width":99999999,"height":99999999}]}`))
	f.Add([]byte(`{"streams":[]}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(``))
	f.Add(
		[]byte(
			`{"streams":[{"codec_type":"video","codec_name":"mjpeg","width":64,"height":64,"disposition":{"attached_pic":1}},` +
				`{"codec_type":"audio","sample_rate":"48000","channels":2},{"codec_type":"video","codec_name":"h264","width":32,"height":16}]}`,
		),
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		hdr, err := ParseFrameHeader(data)
		if err != nil {
			return
		}
		if hdr.Width <= 0 || hdr.Height <= 0 || hdr.Width*hdr.Height > maxPixels || hdr.Frames < 0 || hdr.AudioRate < 0 || hdr.AudioChannels < 0 {
			t.Errorf("accepted %+v", hdr)
		}
	})
}
