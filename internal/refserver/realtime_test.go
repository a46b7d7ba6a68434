package refserver

import (
	"context"
	"errors"
	"strings"
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
	for {
		m, _, err := rtRead(t.Context(), conn)
		if err != nil {
			var ce websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != websocket.StatusInternalError {
				t.Fatalf("session ended with %v, want close 1011 from close-chunk", err)
			}
			break
		}
		if m != nil && m["type"] == "chunk_stats" {
			totals = append(totals, m["scheduler_forward_ms"])
		}
	}
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
