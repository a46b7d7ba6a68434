package runner

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/fetch"
	"github.com/diffusion-check/diffusion-check/internal/inputfile"
	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/suite"
)

// The realtime session client: SGLang's collect_realtime_output (test/server/
// realtime_consistency.py, triple-mu/sglang 2026-06-02) against the server's
// /v1/realtime_video/generate (runtime/entrypoints/openai/realtime/realtime_video_api.py,
// AsherBond/sglang 2026-07-05). Every message is msgpack. The client sends one init message,
// then reads until num_chunks chunks (a chunk is complete with its final frame batch) and as
// many chunk_stats messages have arrived, and closes the session.

// Content types of the lossless transport (runtime/utils/realtime_video.py).
const (
	rawRGB           = "application/x-raw-rgb"
	rawRGBDeltaGzip  = "application/x-raw-rgb-delta-gzip"
	rawRGBADeltaGzip = "application/x-raw-rgba-delta-gzip"
	// realtimeFPS is the frame rate of the kept frames when the case sets none, as
	// generate_realtime_video's int(sampling_params.fps or 24).
	realtimeFPS = 24
	// messagesPerChunk caps the messages of one session at this many per chunk asked for: a
	// server that streams chunk_stats or empty batches without end cannot keep the request
	// going forever. A chunk takes 2 messages per 16 frames and its chunk_stats.
	messagesPerChunk = 256
	// maxFrameSide and maxBatchFrames bound a batch header's numbers, so that their products
	// cannot overflow; the payload itself is bounded by max_output_mb.
	maxFrameSide   = 1 << 16
	maxBatchFrames = 1 << 20
)

// realtimeMsg is every field of a server message the client reads (frame_batch,
// frame_batch_header, chunk_stats, error).
type realtimeMsg struct {
	Type              string `msgpack:"type"`
	Content           any    `msgpack:"content"`
	RequestID         string `msgpack:"request_id"`
	ChunkIndex        *int   `msgpack:"chunk_index"`
	ContentType       string `msgpack:"content_type"`
	Width             int    `msgpack:"width"`
	Height            int    `msgpack:"height"`
	Channels          int    `msgpack:"channels"`
	NumFrames         int    `msgpack:"num_frames"`
	BytesPerFrame     int    `msgpack:"bytes_per_frame"`
	DeltaReference    string `msgpack:"delta_reference"`
	IsFinalFrameBatch *bool  `msgpack:"is_final_frame_batch"`
	Payload           []byte `msgpack:"payload"`

	RawBytes           int64   `msgpack:"raw_bytes"`
	WSPayloadBytes     int64   `msgpack:"ws_payload_bytes"`
	RequestPrepareMs   float64 `msgpack:"request_prepare_ms"`
	SchedulerForwardMs float64 `msgpack:"scheduler_forward_ms"`
	RawPayloadBuildMs  float64 `msgpack:"raw_payload_build_ms"`
	RawWriteMs         float64 `msgpack:"raw_write_ms"`
	WSWriteMs          float64 `msgpack:"ws_write_ms"`
	ChunkTotalMs       float64 `msgpack:"chunk_total_ms"`
}

// realtimeURL is SGLang's realtime_ws_url: the server's base URL with ws(s):// and the path.
func realtimeURL(base string) (string, error) {
	base = strings.TrimSuffix(base, "/")
	switch {
	case strings.HasPrefix(base, "https://"):
		return "wss://" + strings.TrimPrefix(base, "https://") + "/v1/realtime_video/generate", nil
	case strings.HasPrefix(base, "http://"):
		return "ws://" + strings.TrimPrefix(base, "http://") + "/v1/realtime_video/generate", nil
	}
	return "", fmt.Errorf("realtime session: unsupported base URL %q", base)
}

// realtimeInit is build_realtime_init_payload: the request's fields, then extra (which wins),
// without nulls. first_frame is the input_reference file's bytes.
func (c *client) realtimeInit(ctx context.Context, cs *suite.Case) (map[string]any, error) {
	r := cs.Request
	body := c.videoFields(r)
	body["type"] = "init"
	switch {
	case suite.IsURL(r.InputReference):
		body["first_frame"] = r.InputReference // the server fetches it, as SGLang's does
	case r.InputReference != "":
		b, err := inputfile.Read(ctx, r.InputReference, maxInputBytes)
		if err != nil {
			return nil, fmt.Errorf("realtime first frame: %w", err)
		}
		body["first_frame"] = b
	}
	merge(body, r.Extra)
	for k, v := range body {
		if v == nil {
			delete(body, k)
		}
	}
	return body, nil
}

// firstFrameLimits bound the pre-flight fetch of a first frame URL: an input file's cap, a few
// redirects, and a timeout of its own, far below any request timeout, so that a URL that
// never answers fails its request naming the URL rather than passing for a hung server.
var firstFrameLimits = fetch.Limits{MaxBytes: maxInputBytes, Timeout: 30 * time.Second, MaxRedirects: 5}

// fetchFirstFrame is the pre-flight of a realtime case whose first frame is a URL: the URL is
// still sent as the init message's first_frame string for the server to fetch (as SGLang's
// prepare_realtime_first_frame passes an image URL through, realtime_consistency.py), but the
// harness fetches it first, so that a dead URL fails the request naming it, and the frame the
// session used is recorded (its size, SHA-256 and sniffed type). A body that sniffs as no
// image fails too, with its record. hc nil is http.DefaultClient.
func fetchFirstFrame(ctx context.Context, hc *http.Client, raw string, lim fetch.Limits) (*results.FirstFrame, error) {
	b, err := fetch.Get(ctx, hc, raw, lim)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b.Data)
	ff := &results.FirstFrame{URL: fetch.Redact(raw), Bytes: int64(len(b.Data)), SHA256: hex.EncodeToString(sum[:]), ContentType: http.DetectContentType(b.Data)}
	if !strings.HasPrefix(ff.ContentType, "image/") {
		return ff, fmt.Errorf("GET %s: the body (%d bytes) is no image: it sniffs as %s", ff.URL, ff.Bytes, ff.ContentType)
	}
	return ff, nil
}

// firstFrame runs the pre-flight of a request of case c when its first frame is a URL
// (fetchFirstFrame), recording what was fetched in rr. The error names the URL; the request's
// line and the report name its case and request ("case rt request 1/2: output.present:
// realtime first_frame: GET https://…: HTTP 404 Not Found").
func (r *run) firstFrame(ctx context.Context, c *suite.Case, rr *results.RequestResult) error {
	if c.Realtime == nil || !suite.IsURL(c.Request.InputReference) {
		return nil
	}
	ff, err := fetchFirstFrame(ctx, r.opts.HTTPClient, c.Request.InputReference, firstFrameLimits)
	rr.RealtimeFirstFrame = ff
	if err != nil {
		return fmt.Errorf("realtime first_frame: %w", err)
	}
	return nil
}

// realtimeSession holds what one session has received so far.
type realtimeSession struct {
	stats    []results.ChunkStats
	received map[int]bool
	frames   int // frames written to raw
	w, h     int
	previous []byte // the last frame, reference of a delta batch
	raw      *os.File
	written  int64
	maxBytes int64
	sent     time.Time // when the init message was sent: the session's E2E runs from here
}

// realtime runs one realtime session of case cs. The frames are kept losslessly as
// output.mkv; the reply's ID is the last chunk's request id, whose performance record holds
// the session's VRAM (checks.RealtimeRecordID). On a failure the chunk stats received so far
// come back with the error: nothing measured is lost.
func (c *client) realtime(ctx context.Context, cs *suite.Case) (rep reply, err error) {
	url, err := realtimeURL(c.base)
	if err != nil {
		return reply{}, err
	}
	init, err := c.realtimeInit(ctx, cs)
	if err != nil {
		return reply{}, err
	}
	msg, err := msgpack.Marshal(init)
	if err != nil {
		return reply{}, fmt.Errorf("realtime session: encode init: %w", err)
	}
	opts := &websocket.DialOptions{}
	if c.http != nil && c.http.Timeout == 0 {
		opts.HTTPClient = c.http // a client timeout would cut the session: the context bounds it
	}
	// The handshake's response body is closed by Dial ("You never need to close resp.Body").
	conn, _, err := websocket.Dial(ctx, url, opts) //nolint:bodyclose // closed by Dial
	if err != nil {
		return reply{}, fmt.Errorf("realtime session %s: %w", url, err)
	}
	defer conn.CloseNow() //nolint:errcheck // after Close, or on a failure already reported
	conn.SetReadLimit(max(c.maxBytes, 1<<20))
	raw, err := os.CreateTemp(c.dir, ".frames-*.rgb")
	if err != nil {
		return reply{}, &saveError{err}
	}
	defer func() {
		_ = raw.Close() // a scratch file, removed next
		_ = os.Remove(raw.Name())
	}()
	s := &realtimeSession{received: map[int]bool{}, raw: raw, maxBytes: c.maxBytes}
	defer func() {
		rep.Chunks = s.stats
		rep.ID = checks.RealtimeRecordID(s.stats)
	}()
	s.sent = time.Now()
	if err := conn.Write(ctx, websocket.MessageBinary, msg); err != nil {
		return reply{}, fmt.Errorf("realtime session %s: send init: %w", url, err)
	}
	if err := s.read(ctx, conn, cs.Realtime.NumChunks); err != nil {
		return rep, err
	}
	// The client leaves, as SGLang's does by closing the socket.
	_ = conn.Close(websocket.StatusNormalClosure, "")
	fps := cs.Request.FPS
	if fps <= 0 {
		fps = realtimeFPS
	}
	f, err := s.keep(ctx, c.tools, filepath.Join(c.dir, mediaName(0, "mkv")), fps)
	if err != nil {
		return rep, err
	}
	rep.Files, rep.Ext = []mediaFile{f}, "mkv"
	return rep, nil
}

// read reads the session until want chunks and as many chunk_stats have arrived.
func (s *realtimeSession) read(ctx context.Context, conn *websocket.Conn, want int) error {
	for n := 0; len(s.received) < want || len(s.stats) < len(s.received); n++ {
		if n >= messagesPerChunk*want {
			return fmt.Errorf("realtime session: more than %d messages before %d chunks arrived", messagesPerChunk*want, want)
		}
		m, err := readRealtime(ctx, conn)
		if err != nil {
			return s.ended(err, want)
		}
		switch m.Type {
		case "error":
			return fmt.Errorf("realtime generation failed at chunk %d of %d: server error: %v", len(s.received), want, m.Content)
		case "chunk_stats":
			if m.ChunkIndex == nil {
				return fmt.Errorf("realtime session: chunk_stats without chunk_index after %d chunks", len(s.received))
			}
			s.stats = append(s.stats, results.ChunkStats{Index: *m.ChunkIndex, RequestID: m.RequestID, ContentType: m.ContentType,
				NumFrames: m.NumFrames, RawBytes: m.RawBytes, WSPayloadBytes: m.WSPayloadBytes,
				RequestPrepareMs: m.RequestPrepareMs, SchedulerForwardMs: m.SchedulerForwardMs, RawPayloadBuildMs: m.RawPayloadBuildMs,
				RawWriteMs: m.RawWriteMs, WSWriteMs: m.WSWriteMs, ChunkTotalMs: m.ChunkTotalMs, SessionMs: ms(time.Since(s.sent))})
			continue
		case "frame_batch":
		case "frame_batch_header":
			typ, p, err := conn.Read(ctx)
			if err != nil {
				return s.ended(err, want)
			}
			if typ != websocket.MessageBinary {
				return fmt.Errorf("realtime chunk %d: the frame payload is a text message, want binary", len(s.received))
			}
			m.Payload = p
		default:
			return fmt.Errorf("realtime session: unexpected message type %q after %d chunks", m.Type, len(s.received))
		}
		if m.ChunkIndex == nil {
			return fmt.Errorf("realtime session: frame batch without chunk_index after %d chunks", len(s.received))
		}
		if err := s.addFrames(m); err != nil {
			return fmt.Errorf("realtime chunk %d: %w", *m.ChunkIndex, err)
		}
		if m.IsFinalFrameBatch == nil || *m.IsFinalFrameBatch {
			s.received[*m.ChunkIndex] = true
		}
	}
	return nil
}

// keep encodes the session's frames losslessly at path.
func (s *realtimeSession) keep(ctx context.Context, tools media.Tools, path string, fps int) (mediaFile, error) {
	if s.frames == 0 {
		return mediaFile{}, fmt.Errorf("realtime session: %d chunks arrived with no frames", len(s.received))
	}
	if _, err := s.raw.Seek(0, io.SeekStart); err != nil {
		return mediaFile{}, &saveError{err}
	}
	var rerr error
	err := tools.EncodeLosslessVideo(ctx, path, s.w, s.h, s.frames, fps, func(_ int, rgb []byte) {
		if rerr == nil {
			_, rerr = io.ReadFull(s.raw, rgb)
		}
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return mediaFile{}, &saveError{fmt.Errorf("keeping the streamed frames: %w", err)}
	}
	st, err := os.Stat(path)
	if err != nil {
		return mediaFile{}, &saveError{err}
	}
	return mediaFile{Path: path, Bytes: st.Size()}, nil
}

// readRealtime reads one msgpack message of the server.
func readRealtime(ctx context.Context, conn *websocket.Conn) (realtimeMsg, error) {
	_, b, err := conn.Read(ctx)
	if err != nil {
		return realtimeMsg{}, err
	}
	var m realtimeMsg
	if err := msgpack.Unmarshal(b, &m); err != nil {
		return realtimeMsg{}, fmt.Errorf("realtime session: a message that is no msgpack map of the protocol: %w", err)
	}
	return m, nil
}

// ended says why the session stopped before its chunks arrived: the server closed it, the
// request timed out, or the connection broke.
func (s *realtimeSession) ended(err error, want int) error {
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return fmt.Errorf("realtime session closed by the server after %d of %d chunks (waiting for chunk %d): status %d %q",
			len(s.received), want, len(s.received), ce.Code, ce.Reason)
	}
	return fmt.Errorf("realtime session ended after %d of %d chunks (waiting for chunk %d): %w", len(s.received), want, len(s.received), err)
}

// addFrames is decode_realtime_raw_rgb_frames: the batch's payload (delta-gzip restored
// against the previous frame) is num_frames frames of bytes_per_frame; an RGBA frame loses
// its alpha. The frames are appended to the session's raw file, within max_output_mb.
func (s *realtimeSession) addFrames(m realtimeMsg) error {
	switch m.ContentType {
	case rawRGB, rawRGBDeltaGzip, rawRGBADeltaGzip:
	default:
		return fmt.Errorf("unsupported realtime frame content type %q (want a lossless raw transport)", m.ContentType)
	}
	w, h, ch, n, per := m.Width, m.Height, m.Channels, m.NumFrames, m.BytesPerFrame
	if w <= 0 || h <= 0 || w > maxFrameSide || h > maxFrameSide || (ch != 3 && ch != 4) || n < 0 || n > maxBatchFrames ||
		int64(w)*int64(h)*int64(ch) != int64(per) {
		return fmt.Errorf("frame batch header: %dx%d, %d channels, %d bytes per frame: not a frame layout", w, h, ch, per)
	}
	if s.frames > 0 && (w != s.w || h != s.h) {
		return fmt.Errorf("frame size %dx%d, but the session's frames are %dx%d", w, h, s.w, s.h)
	}
	want := int64(n) * int64(per)
	if s.written+want*3/int64(ch) > s.maxBytes {
		return fmt.Errorf("the streamed frames are larger than %d MiB (the server's max_output_mb): not read further", s.maxBytes>>20)
	}
	payload := m.Payload
	delta := m.ContentType != rawRGB
	if delta {
		zr, err := gzip.NewReader(bytes.NewReader(payload))
		if err != nil {
			return fmt.Errorf("delta gzip payload: %w", err)
		}
		payload, err = io.ReadAll(io.LimitReader(zr, want+1))
		if err != nil {
			return fmt.Errorf("delta gzip payload: %w", err)
		}
	}
	if int64(len(payload)) != want {
		return fmt.Errorf("realtime payload size mismatch: expected %d, got %d", want, len(payload))
	}
	ref := s.previous
	if delta && (m.DeltaReference != "previous-frame" || len(ref) != per) {
		ref = nil // restore_delta_gzip_raw_rgb_payload without a reference frame
	}
	rgb := make([]byte, 0, 3*w*h*n)
	for i := range n {
		f := payload[i*per : (i+1)*per]
		if delta && ref != nil {
			for j := range f {
				f[j] ^= ref[j]
			}
		}
		ref = f
		if ch == 4 {
			for p := 0; p < len(f); p += 4 {
				rgb = append(rgb, f[p], f[p+1], f[p+2])
			}
		} else {
			rgb = append(rgb, f...)
		}
	}
	if n > 0 {
		s.previous = append(s.previous[:0], ref...)
		s.w, s.h = w, h
	}
	if _, err := s.raw.Write(rgb); err != nil {
		return &saveError{err}
	}
	s.written += int64(len(rgb))
	s.frames += n
	return nil
}
