package refserver

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/coder/websocket"
	"github.com/vmihailenco/msgpack/v5"
)

// rtSession dials the realtime endpoint of ts and sends init.
func rtSession(t *testing.T, ts *testServer, init map[string]any) *websocket.Conn {
	t.Helper()
	conn, _, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(ts.URL, "http")+RealtimePath, nil) //nolint:bodyclose // closed by Dial
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.CloseNow() })
	conn.SetReadLimit(64 << 20)
	b, err := msgpack.Marshal(init)
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Write(t.Context(), websocket.MessageBinary, b); err != nil {
		t.Fatal(err)
	}
	return conn
}

// rtRead reads one message: a msgpack map, or (m nil) a raw payload.
func rtRead(ctx context.Context, conn *websocket.Conn) (m map[string]any, raw []byte, err error) {
	_, b, err := conn.Read(ctx)
	if err != nil {
		return nil, nil, err
	}
	if msgpack.Unmarshal(b, &m) == nil {
		return m, b, nil
	}
	return nil, b, nil // not msgpack: a raw frame payload
}

// TestRealtimeSessionSpeaksSGLangsProtocol: SGLang's realtime_video_api.py generate and
// realtime_output_adapter.py _send_frame_batches (AsherBond/sglang 2026-07-05): an invalid
// init is answered "invalid generate request" and the session waits for a valid one; each
// chunk is at most 16 frames per batch, a payload of 64 KiB or more goes as a
// frame_batch_header and a binary message, a smaller one inside a frame_batch; then a
// chunk_stats with whole-ms timings and the chunk's request id "<session>_<hex>", whose perf
// record is in performance.log; max_chunks ends the session with close 1000.
func TestRealtimeSessionSpeaksSGLangsProtocol(t *testing.T) {
	ts := start(t, Config{Timing: TimingComputed})
	conn := rtSession(t, ts, map[string]any{"type": "init", "size": "bad"})
	m, _, err := rtRead(t.Context(), conn)
	if err != nil || m["type"] != "error" || m["content"] != "invalid generate request" {
		t.Fatalf("answer to a bad init: %v %v, want SGLang's invalid generate request", m, err)
	}
	b, _ := msgpack.Marshal(map[string]any{"type": "init", "prompt": "p", "size": "128x128", "num_frames": 17, "num_inference_steps": 2, "max_chunks": 2})
	if err := conn.Write(t.Context(), websocket.MessageBinary, b); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	var ids []string
	frames := 0
	for {
		m, raw, err := rtRead(t.Context(), conn)
		if err != nil {
			var ce websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != websocket.StatusNormalClosure {
				t.Fatalf("session ended with %v, want close 1000 after max_chunks", err)
			}
			break
		}
		if m == nil {
			kinds = append(kinds, "payload")
			if len(raw) != 16*128*128*3 {
				t.Errorf("payload of %d bytes, want 16 frames", len(raw))
			}
			continue
		}
		kinds = append(kinds, m["type"].(string))
		switch m["type"] {
		case "frame_batch", "frame_batch_header":
			n, _ := msgInt(m["num_frames"])
			frames += int(n)
		case "chunk_stats":
			ids = append(ids, m["request_id"].(string))
			if _, ok := m["chunk_total_ms"].(float64); ok {
				t.Errorf("chunk_total_ms %v is a float, SGLang sends whole ms", m["chunk_total_ms"])
			}
		}
	}
	// 17 frames per chunk: a 16-frame batch (over 64 KiB: header + payload), then 1 frame (48 KiB: inline).
	want := []string{"frame_batch_header", "payload", "frame_batch", "chunk_stats", "frame_batch_header", "payload", "frame_batch", "chunk_stats"}
	if strings.Join(kinds, ",") != strings.Join(want, ",") {
		t.Errorf("messages %v, want %v", kinds, want)
	}
	if frames != 34 {
		t.Errorf("%d frames, want 2 chunks of 17", frames)
	}
	recs := waitRecords(t, ts.dir, 2)
	for i, id := range ids {
		if recs[i].RequestID != id || !strings.Contains(id, "_") {
			t.Errorf("chunk %d: perf record %q, chunk_stats request id %q: want one record per chunk, same id", i, recs[i].RequestID, id)
		}
	}
}

// TestRealtimeFaultsActOnChunks: slow-chunk=K:F makes chunk K (1-based) F times slower in its
// chunk_stats; close-chunk=K closes the session with 1011 before chunk K.
func TestRealtimeFaultsActOnChunks(t *testing.T) {
	ts := start(t, Config{Timing: TimingComputed, StepMs: 1, Faults: faults(t, "slow-chunk=2:100", "close-chunk=3")})
	conn := rtSession(t, ts, map[string]any{"type": "init", "size": "16x16", "num_frames": 1, "num_inference_steps": 2})
	var totals []any
	rtUntilClose(t, conn, websocket.StatusInternalError, func(m map[string]any, _ []byte) { // close-chunk's 1011
		if m != nil && m["type"] == "chunk_stats" {
			totals = append(totals, m["scheduler_forward_ms"])
		}
	})
	// Computed timing: 2 steps of 1 ms and 0.25 ms of decoding; chunk 2 denoises 100× slower.
	if len(totals) != 2 {
		t.Fatalf("scheduler_forward_ms of the chunks before the close: %v, want 2", totals)
	}
	first, _ := msgInt(totals[0])
	second, _ := msgInt(totals[1])
	if first != 2 || second != 200 {
		t.Errorf("scheduler_forward_ms %d then %d, want 2 then 200 (2.25 and 200.25 rounded as _transport_ms)", first, second)
	}
}

// FuzzRealtimeInit: any first message of a session is a valid init or an error, and a valid
// one's chunk fits the chunk cap.
func FuzzRealtimeInit(f *testing.F) {
	good, _ := msgpack.Marshal(map[string]any{"type": "init", "size": "64x48", "num_frames": 3, "max_chunks": 2})
	f.Add(good)
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := parseRealtimeInit(data)
		if err != nil {
			return
		}
		if in.w*in.h*3*in.frames > realtimeMaxChunkBytes || in.frames < 1 || in.steps < 1 {
			t.Errorf("accepted an init of %dx%d, %d frames, %d steps", in.w, in.h, in.frames, in.steps)
		}
	})
}

// msgInt is a decoded msgpack integer as an int64 (msgpack decodes small ones as int8 …).
func msgInt(v any) (int64, bool) {
	b, err := msgpack.Marshal(v)
	var n int64
	return n, err == nil && msgpack.Unmarshal(b, &n) == nil
}

// pngImage is a w×h PNG of one colour.
func pngImage(t *testing.T, w, h int, c color.NRGBA) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// rtUntilClose reads conn, handing each message to each (m nil: a raw payload), until the
// server closes it, which it must do with code.
func rtUntilClose(t *testing.T, conn *websocket.Conn, code websocket.StatusCode, each func(m map[string]any, raw []byte)) {
	t.Helper()
	for {
		m, raw, err := rtRead(t.Context(), conn)
		if err != nil {
			var ce websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != code {
				t.Fatalf("session ended with %v, want close %d", err, code)
			}
			return
		}
		each(m, raw)
	}
}

// rtFrames reads a session of max_chunks chunks to its close and returns its raw frames.
func rtFrames(t *testing.T, conn *websocket.Conn) []byte {
	t.Helper()
	var frames []byte
	rtUntilClose(t, conn, websocket.StatusNormalClosure, func(m map[string]any, raw []byte) {
		switch {
		case m == nil:
			frames = append(frames, raw...)
		case m["type"] == "frame_batch":
			p, _ := m["payload"].([]byte)
			frames = append(frames, p...)
		case m["type"] == "error":
			t.Fatalf("session answered %v", m)
		}
	})
	return frames
}

// TestRealtimeFirstFrameURLIsFetched: a first_frame string is an image URL as SGLang's
// save_realtime_first_frame → save_image_to_path takes it (openai/utils.py
// _maybe_url_image, _save_url_image_to_path, pandalee99/sglang @ cce0a1244): an http(s) URL
// is fetched and its bytes used exactly as sent bytes (the same frames), so the output depends
// on the frame; a failed download (404, a body that is no image by URL and Content-Type) or a
// string that is no URL is "invalid generate request", after which the session still waits
// for a valid init, as _listen_generate_request does.
func TestRealtimeFirstFrameURLIsFetched(t *testing.T) {
	frame := pngImage(t, 8, 8, color.NRGBA{R: 250, G: 10, B: 10, A: 255})
	other := pngImage(t, 8, 8, color.NRGBA{R: 10, G: 10, B: 250, A: 255})
	var gets atomic.Int32
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		switch r.URL.Path {
		case "/frame": // no extension: the Content-Type says it is an image
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write(frame)
		case "/other.png":
			_, _ = w.Write(other)
		case "/page":
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<html></html>"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer files.Close()
	ts := start(t, Config{Timing: TimingComputed})
	init := func(first any) map[string]any {
		return map[string]any{"type": "init", "prompt": "p", "size": "16x16", "num_frames": 2, "num_inference_steps": 1, "max_chunks": 2,
			"first_frame": first}
	}
	byURL := rtFrames(t, rtSession(t, ts, init(files.URL+"/frame")))
	byBytes := rtFrames(t, rtSession(t, ts, init(frame)))
	otherURL := rtFrames(t, rtSession(t, ts, init(files.URL+"/other.png")))
	if len(byURL) == 0 || !bytes.Equal(byURL, byBytes) {
		t.Errorf("frames from the URL (%d bytes) differ from those of the same image sent as bytes (%d bytes)", len(byURL), len(byBytes))
	}
	if bytes.Equal(byURL, otherURL) {
		t.Error("two first frames by URL gave the same frames: the fetched bytes are not used")
	}
	if n := gets.Load(); n != 2 {
		t.Errorf("%d GETs, want 2 (one per URL session)", n)
	}
	for _, bad := range []string{files.URL + "/missing.png", files.URL + "/page", "not a url"} {
		conn := rtSession(t, ts, init(bad))
		m, _, err := rtRead(t.Context(), conn)
		if err != nil || m["type"] != "error" || m["content"] != "invalid generate request" {
			t.Errorf("first_frame %q: %v %v, want SGLang's invalid generate request", bad, m, err)
			continue
		}
		b, _ := msgpack.Marshal(init(frame))
		if err := conn.Write(t.Context(), websocket.MessageBinary, b); err != nil {
			t.Fatal(err)
		}
		if got := rtFrames(t, conn); !bytes.Equal(got, byBytes) {
			t.Errorf("first_frame %q: the valid init after it streamed other frames", bad)
		}
	}
	log := ts.log.String()
	for _, want := range []string{
		"invalid generate request, session_id=",
		"failed to download image from URL " + files.URL + "/missing.png: GET " + files.URL + "/missing.png: HTTP 404 Not Found",
		"URL does not point to an image. Content-Type: text/html", "error=Unsupported image url format",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("server log lacks %q:\n%s", want, log)
		}
	}
}

// A 5xx is retried as _is_retryable_download_error says (3 attempts); a 404 is not.
func TestRealtimeFirstFrameRetries(t *testing.T) {
	var gets atomic.Int32
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if gets.Add(1) < 3 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(pngImage(t, 4, 4, color.NRGBA{A: 255}))
	}))
	defer files.Close()
	ts := start(t, Config{Timing: TimingComputed})
	frames := rtFrames(t, rtSession(t, ts, map[string]any{"type": "init", "size": "16x16", "num_frames": 1, "max_chunks": 1, "first_frame": files.URL + "/f"}))
	if len(frames) != 16*16*3 || gets.Load() != 3 {
		t.Errorf("%d frame bytes after %d GETs, want one frame after 2 retries", len(frames), gets.Load())
	}
	if log := ts.log.String(); !strings.Contains(log, "Retrying image download (2/3) for "+files.URL+"/f after 0.4s due to: GET "+files.URL+"/f: HTTP 503") {
		t.Errorf("server log:\n%s", log)
	}
}
