package media

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// The yuv420p path reads ffmpeg's yuv4mpegpipe output rather than rawvideo. The yuv4mpegpipe
// muxer takes the decoded frames as they are (the wrapped_avframe codec) and writes their
// planes, where the rawvideo encoder first copies every frame into a new packet: four decodes
// of the 720p bench videos into pipes took 1,619 ms of CPU against 1,680 ms (2 cores, the static
// FFmpeg 4.1, six alternated runs; docs/performance.md). The stream is a header line,
//
//	YUV4MPEG2 W1280 H720 F24:1 Ip A1:1 C420jpeg XYSCSS=420JPEG
//
// then, for every frame, a line "FRAME" (parameters may follow a space) and the frame's three
// planes, row after row without padding, as rawvideo would have sent them. The format:
// FFmpeg's libavformat/yuv4mpegenc.c (yuv4_generate_header, yuv4_write_packet; read at
// FFmpeg/FFmpeg 056de9fd, the muxer of the 4.x series): "%s W%d H%d F%d:%d I%c A%d:%d%s\n" and
// "FRAME\n", where for yuv420p the last field is " C420jpeg XYSCSS=420JPEG", or C420mpeg2 or
// C420paldv by the chroma siting, which changes no byte of the planes. Fields this reader does
// not know (later versions add X fields) are skipped. ffmpeg writes the header with the first
// frame: a stream that decodes no frame has none.

// y4mLine bounds the header and FRAME lines: ffmpeg's are below 100 bytes.
const y4mLine = 4096

// y4mReader reads the yuv4mpeg framing around the planes of ffmpeg's stdout.
type y4mReader struct {
	br     *bufio.Reader
	headed bool // the header line has been read and checked
}

func newY4MReader(r io.Reader) *y4mReader { return &y4mReader{br: bufio.NewReaderSize(r, y4mLine)} }

// next reads up to the planes of the next frame of a w×h stream: the header line first, then
// the frame's FRAME line. It returns io.EOF where the stream ends cleanly before a frame (or
// before the header: ffmpeg decoded nothing), io.ErrUnexpectedEOF where it ends inside a line,
// and an error that says what was found for a line that is not what ffmpeg writes.
func (y *y4mReader) next(w, h int) error {
	if !y.headed {
		line, err := y.line()
		if err != nil {
			return err
		}
		if err := checkY4MHeader(line, w, h); err != nil {
			return err
		}
		y.headed = true
	}
	line, err := y.line()
	if err != nil {
		return err
	}
	if tag, _, _ := bytes.Cut(line, []byte{' '}); string(tag) != "FRAME" {
		return fmt.Errorf("yuv4mpeg stream has %q where a frame starts", clip(line))
	}
	return nil
}

// line returns the next line without its newline.
func (y *y4mReader) line() ([]byte, error) {
	line, err := y.br.ReadSlice('\n')
	switch {
	case err == nil:
		return line[:len(line)-1], nil
	case errors.Is(err, io.EOF) && len(line) == 0:
		return nil, io.EOF
	case errors.Is(err, io.EOF):
		return nil, io.ErrUnexpectedEOF
	case errors.Is(err, bufio.ErrBufferFull):
		return nil, fmt.Errorf("yuv4mpeg stream has a line of over %d bytes", y4mLine)
	}
	return nil, err
}

// checkY4MHeader checks that ffmpeg's header line announces w×h frames of 4:2:0 chroma (what
// it was asked for), so that frames of another shape than the probe's (a size that changed,
// a turn the probe did not say) are an error rather than misread planes.
func checkY4MHeader(line []byte, w, h int) error {
	fields := bytes.Fields(line)
	if len(fields) == 0 || string(fields[0]) != "YUV4MPEG2" {
		return fmt.Errorf("ffmpeg's output is not a yuv4mpeg stream: it starts %q", clip(line))
	}
	gw, gh := -1, -1
	for _, f := range fields[1:] {
		var err error
		switch f[0] {
		case 'W':
			gw, err = strconv.Atoi(string(f[1:]))
		case 'H':
			gh, err = strconv.Atoi(string(f[1:]))
		case 'C':
			if !bytes.HasPrefix(f[1:], []byte("420")) {
				return fmt.Errorf("yuv4mpeg stream is %s, not the 4:2:0 asked for", f[1:])
			}
		}
		if err != nil {
			return fmt.Errorf("yuv4mpeg header %q: %w", clip(line), err)
		}
	}
	if gw < 0 || gh < 0 {
		return fmt.Errorf("yuv4mpeg header %q gives no size", clip(line))
	}
	if gw != w || gh != h {
		return fmt.Errorf("ffmpeg sends %dx%d frames where the probe said %dx%d", gw, gh, w, h)
	}
	return nil
}

// clip shortens a line for a message.
func clip(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "…"
	}
	return string(b)
}
