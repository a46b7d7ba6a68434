package runner

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/diffusion-check/diffusion-check/suite"
)

// scriptedRealtime is a websocket server that reads the init message into *init and then
// plays a script of messages (msgpack maps, or raw bytes), then closes with close (0: leave
// the connection open until the client goes).
type scriptedRealtime struct {
	init   map[string]any
	script []any
	close  websocket.StatusCode
}

func (s *scriptedRealtime) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/realtime_video/generate" {
		http.NotFound(w, r)
		return
	}
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer conn.CloseNow() //nolint:errcheck // a test server's connection, after Close or when the client has gone
	ctx := r.Context()
	_, b, err := conn.Read(ctx)
	if err != nil {
		return
	}
	if err := msgpack.Unmarshal(b, &s.init); err != nil {
		return
	}
	for _, m := range s.script {
		out, ok := m.([]byte)
		if !ok {
			if out, err = msgpack.Marshal(m); err != nil {
				return
			}
		}
		if conn.Write(ctx, websocket.MessageBinary, out) != nil {
			return
		}
	}
	if s.close != 0 {
		_ = conn.Close(s.close, "scripted close")
		return
	}
	_, _, _ = conn.Read(ctx) // until the client leaves
}

// rtFrames is n frames of 2×2 RGB, frame i filled with byte base+i.
func rtFrames(n int, base byte) []byte {
	var b []byte
	for i := range n {
		b = append(b, bytes.Repeat([]byte{base + byte(i)}, 12)...)
	}
	return b
}

func rtBatch(chunk int, contentType string, payload []byte, frames int, extra map[string]any) map[string]any {
	m := map[string]any{"type": "frame_batch", "request_id": "s_" + string(rune('a'+chunk)), "chunk_index": chunk,
		"content_type": contentType, "num_frames": frames, "width": 2, "height": 2, "channels": 3, "bytes_per_frame": 12,
		"is_final_frame_batch": true, "payload": payload}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func rtStats(chunk int, totalMs float64) map[string]any {
	return map[string]any{"type": "chunk_stats", "request_id": "s_" + string(rune('a'+chunk)), "chunk_index": chunk,
		"num_frames": 2, "chunk_total_ms": totalMs, "scheduler_forward_ms": int64(totalMs) - 1, "ws_payload_bytes": 100}
}

// deltaGzip is build_delta_gzip_raw_rgb_payload: each frame XORed with the one before it
// (the first with ref when given), gzipped.
func deltaGzip(t *testing.T, frames []byte, per int, ref []byte) []byte {
	t.Helper()
	var delta []byte
	prev := ref
	for i := 0; i < len(frames); i += per {
		f := frames[i : i+per]
		d := append([]byte(nil), f...)
		if prev != nil {
			for j := range d {
				d[j] ^= prev[j]
			}
		}
		delta = append(delta, d...)
		prev = f
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(delta)
	_ = zw.Close()
	return buf.Bytes()
}

func realtimeCase(chunks int) *suite.Case {
	return &suite.Case{ID: "rt", Modality: suite.Video, Request: suite.Request{Prompt: "p", Size: "2x2", FPS: 4, NumFrames: 2, Extra: map[string]any{"seed": 7}},
		Realtime: &suite.Realtime{NumChunks: chunks}}
}

// TestRealtimeSessionReadsSGLangsProtocol: the init message is build_realtime_init_payload's,
// and collect_realtime_output's reading rules hold (realtime_consistency.py, triple-mu/sglang
// 2026-06-02): a frame_batch carries its payload, a frame_batch_header is followed by the
// payload message, a delta-gzip batch restores against the previous frame, the session ends
// once num_chunks chunks and as many chunk_stats arrived, and the reply's id is the last
// chunk's request id.
func TestRealtimeSessionReadsSGLangsProtocol(t *testing.T) {
	first := rtFrames(2, 10)
	second := rtFrames(2, 50)
	srv := &scriptedRealtime{script: []any{
		rtBatch(0, rawRGB, first, 2, nil),
		rtStats(0, 30),
		func() map[string]any {
			m := rtBatch(1, rawRGBDeltaGzip, nil, 2, map[string]any{"type": "frame_batch_header", "delta_reference": "previous-frame"})
			delete(m, "payload")
			return m
		}(),
		deltaGzip(t, second, 12, first[12:]),
		rtStats(1, 40),
	}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := t.TempDir()
	cl := &client{http: ts.Client(), base: ts.URL, model: "m", dir: dir, maxBytes: 1 << 20}
	rep, err := cl.realtime(t.Context(), realtimeCase(2))
	if err != nil {
		t.Fatal(err)
	}
	wantInit := map[string]any{"type": "init", "model": "m", "prompt": "p", "size": "2x2", "fps": int8(4), "num_frames": int8(2), "seed": int8(7)}
	if d := cmp.Diff(wantInit, srv.init); d != "" {
		t.Errorf("init message (-want +got):\n%s", d)
	}
	if rep.ID != "s_b" || len(rep.Chunks) != 2 || rep.Chunks[1].ChunkTotalMs != 40 {
		t.Errorf("reply id %q chunks %+v, want the last chunk's id s_b and both chunk_stats", rep.ID, rep.Chunks)
	}
	if len(rep.Files) != 1 || rep.Ext != "mkv" {
		t.Fatalf("files %+v ext %q, want one mkv", rep.Files, rep.Ext)
	}
}

// TestRealtimeSessionHostileServer: a server that ends the session early, sends an error,
// oversized or malformed batches, or an endless stream fails the request with an error that
// names the chunk, and the chunk stats it did send come back with it.
func TestRealtimeSessionHostileServer(t *testing.T) {
	ok := rtBatch(0, rawRGB, rtFrames(2, 1), 2, nil)
	endless := []any{ok}
	for range 3 * messagesPerChunk {
		endless = append(endless, rtStats(0, 1))
	}
	tests := []struct {
		name      string
		script    []any
		close     websocket.StatusCode
		maxBytes  int64
		want      string
		wantStats int
	}{
		{name: "closed early", script: []any{ok, rtStats(0, 5)}, close: websocket.StatusInternalError,
			want: `realtime session closed by the server after 1 of 3 chunks (waiting for chunk 1): status 1011 "scripted close"`, wantStats: 1},
		{name: "error message", script: []any{ok, rtStats(0, 5), map[string]any{"type": "error", "content": "boom"}},
			want: "realtime generation failed at chunk 1 of 3: server error: boom", wantStats: 1},
		{name: "message over the cap", script: []any{rtBatch(0, rawRGB, make([]byte, 2<<20), 2, nil)}, maxBytes: 1 << 20,
			want: "realtime session ended after 0 of 3 chunks (waiting for chunk 0)"},
		{name: "frames over max_output_mb", script: []any{rtBatch(0, rawRGB, make([]byte, 12*50000), 50000, nil), rtStats(0, 1),
			rtBatch(1, rawRGB, make([]byte, 12*50000), 50000, nil)},
			want: "realtime chunk 1: the streamed frames are larger than 1 MiB (the server's max_output_mb): not read further", wantStats: 1},
		{name: "payload size mismatch", script: []any{rtBatch(0, rawRGB, rtFrames(1, 1), 2, nil)},
			want: "realtime chunk 0: realtime payload size mismatch: expected 24, got 12"},
		{name: "lossy content type", script: []any{rtBatch(0, "image/webp", []byte("x"), 1, nil)},
			want: `realtime chunk 0: unsupported realtime frame content type "image/webp"`},
		{name: "not a frame layout", script: []any{rtBatch(0, rawRGB, rtFrames(2, 1), 2, map[string]any{"bytes_per_frame": 7})},
			want: "realtime chunk 0: frame batch header: 2x2, 3 channels, 7 bytes per frame: not a frame layout"},
		{name: "not msgpack", script: []any{[]byte{0xc1}}, want: "realtime session: a message that is no msgpack map of the protocol"},
		{name: "unknown type", script: []any{map[string]any{"type": "surprise"}}, want: `realtime session: unexpected message type "surprise" after 0 chunks`},
		{name: "endless stats", script: endless, want: "realtime session: more than 768 messages before 3 chunks arrived", wantStats: 3*messagesPerChunk - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(&scriptedRealtime{script: tt.script, close: tt.close})
			defer ts.Close()
			maxBytes := tt.maxBytes
			if maxBytes == 0 {
				maxBytes = 1 << 20
			}
			cl := &client{http: ts.Client(), base: ts.URL, dir: t.TempDir(), maxBytes: maxBytes}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			rep, err := cl.realtime(ctx, realtimeCase(3))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
			if len(rep.Chunks) != tt.wantStats {
				t.Errorf("%d chunk stats came back, want %d", len(rep.Chunks), tt.wantStats)
			}
			if tt.wantStats > 0 && rep.ID == "" {
				t.Error("the reply lost the last chunk's request id")
			}
			left, _ := filepath.Glob(filepath.Join(cl.dir, ".frames-*"))
			if len(left) > 0 {
				t.Errorf("temporary frame files left behind: %v", left)
			}
		})
	}
}

// FuzzRealtimeFrames: whatever a server puts in a frame batch, addFrames keeps frames of the
// declared layout or returns an error, and never writes past max_output_mb.
func FuzzRealtimeFrames(f *testing.F) {
	f.Add(2, 2, 3, 2, 12, rtFrames(2, 1), false)
	f.Add(2, 2, 4, 1, 16, bytes.Repeat([]byte{7}, 16), false)
	f.Add(1, 1, 3, 1, 3, []byte{0x1f, 0x8b, 0, 0}, true)
	f.Fuzz(func(t *testing.T, w, h, ch, n, per int, payload []byte, delta bool) {
		raw, err := os.CreateTemp(t.TempDir(), "frames")
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		s := &realtimeSession{received: map[int]bool{}, raw: raw, maxBytes: 1 << 20}
		ct := rawRGB
		if delta {
			ct = rawRGBDeltaGzip
		}
		m := realtimeMsg{ContentType: ct, Width: w, Height: h, Channels: ch, NumFrames: n, BytesPerFrame: per, Payload: payload, DeltaReference: "previous-frame"}
		if err := s.addFrames(m); err != nil {
			return
		}
		if s.written > s.maxBytes || s.written != int64(3*w*h*n) {
			t.Errorf("wrote %d bytes for %d frames of %dx%d (cap %d)", s.written, n, w, h, s.maxBytes)
		}
	})
}

// A first frame given as an http(s) URL goes into the init message as that string, as SGLang's
// prepare_realtime_first_frame sends an image URL; a file's bytes are read bounded.
func TestRealtimeInitFirstFrame(t *testing.T) {
	cl := &client{model: "m"}
	c := &suite.Case{Request: suite.Request{Size: "8x8", InputReference: "https://example.com/first.png"}, Realtime: &suite.Realtime{NumChunks: 1}}
	body, err := cl.realtimeInit(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := body["first_frame"].(string); !ok || got != "https://example.com/first.png" {
		t.Errorf("first_frame %#v, want the URL string", body["first_frame"])
	}
	p := filepath.Join(t.TempDir(), "first.png")
	if err := os.WriteFile(p, []byte("png bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.Request.InputReference = p
	if body, err = cl.realtimeInit(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	if got, ok := body["first_frame"].([]byte); !ok || string(got) != "png bytes" {
		t.Errorf("first_frame %#v, want the file's bytes", body["first_frame"])
	}
	c.Request.InputReference = t.TempDir() // a folder: refused, not read
	if _, err := cl.realtimeInit(t.Context(), c); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a folder as first frame: %v", err)
	}
}
