package refserver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/fault"
	"github.com/diffusion-check/diffusion-check/internal/media"
)

// uuid4 is the form of SGLang's request ids (str(uuid.uuid4())).
var uuid4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// syncBuffer is a log sink safe for concurrent writers and readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// exitRecorder is a fake Config.Exit.
type exitRecorder struct {
	mu    sync.Mutex
	codes []int
}

func (e *exitRecorder) exit(code int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.codes = append(e.codes, code)
}

func (e *exitRecorder) calls() []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]int(nil), e.codes...)
}

type testServer struct {
	*httptest.Server
	h    *Handler
	log  *syncBuffer
	exit *exitRecorder
	dir  string // perf log dir
}

// start runs a handler with fast defaults: 1 ms steps, stage logging on (as the runner starts
// every server) and a perf log in a temp dir.
func start(t testing.TB, cfg Config) *testServer {
	t.Helper()
	ts := &testServer{log: &syncBuffer{}, exit: &exitRecorder{}, dir: t.TempDir()}
	if cfg.StepMs == 0 {
		cfg.StepMs = 1
	}
	if cfg.PerfLogDir == "" {
		cfg.PerfLogDir = ts.dir
	}
	cfg.Log, cfg.Exit = ts.log, ts.exit.exit
	cfg.StageLogging = true
	ts.h = warmHandler(cfg)
	ts.Server = httptest.NewServer(ts.h)
	t.Cleanup(ts.Close)
	t.Cleanup(ts.h.Close) // runs first: releases hung requests and jobs
	return ts
}

func faults(t testing.TB, specs ...string) fault.Set {
	t.Helper()
	var f fault.Set
	for _, s := range specs {
		if err := f.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// call sends a request and returns the status and body.
func (ts *testServer) call(t testing.TB, method, path, contentType string, body io.Reader) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, ts.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp.StatusCode, b
}

func (ts *testServer) postJSON(t testing.TB, path string, body any) (int, []byte) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return ts.call(t, http.MethodPost, path, "application/json", bytes.NewReader(b))
}

type imageReply struct {
	ID             string  `json:"id"`
	Created        int64   `json:"created"`
	PeakMemoryMB   float64 `json:"peak_memory_mb"`
	InferenceTimeS float64 `json:"inference_time_s"`
	Data           []struct {
		B64JSON *string `json:"b64_json"`
	} `json:"data"`
	media [][]byte
}

func decodeImageReply(t testing.TB, status int, body []byte) imageReply {
	t.Helper()
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	var r imageReply
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	for i, d := range r.Data {
		if d.B64JSON == nil {
			t.Fatalf("data[%d] has no b64_json: %s", i, body)
		}
		m, err := base64.StdEncoding.DecodeString(*d.B64JSON)
		if err != nil {
			t.Fatalf("data[%d]: %v", i, err)
		}
		r.media = append(r.media, m)
	}
	return r
}

func (ts *testServer) image(t testing.TB, body map[string]any) imageReply {
	t.Helper()
	st, b := ts.postJSON(t, "/v1/images/generations", body)
	return decodeImageReply(t, st, b)
}

type multipartFile struct {
	field, name string
	data        []byte
}

func multipartBody(t testing.TB, fields map[string]string, files ...multipartFile) (string, io.Reader) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for k, v := range fields {
		if err := mw.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		w, err := mw.CreateFormFile(f.field, f.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return mw.FormDataContentType(), &b
}

type jobReply struct {
	ID             string   `json:"id"`
	Object         string   `json:"object"`
	Status         string   `json:"status"`
	Progress       int      `json:"progress"`
	CreatedAt      int64    `json:"created_at"`
	Size           string   `json:"size"`
	Seconds        string   `json:"seconds"`
	PeakMemoryMB   *float64 `json:"peak_memory_mb"`
	InferenceTimeS *float64 `json:"inference_time_s"`
	Error          *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func decodeJob(t testing.TB, status int, body []byte) jobReply {
	t.Helper()
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	var j jobReply
	if err := json.Unmarshal(body, &j); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return j
}

// wait polls a job until it leaves queued or the timeout passes.
func (ts *testServer) wait(t testing.TB, id string, timeout time.Duration) jobReply {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		st, b := ts.call(t, http.MethodGet, "/v1/videos/"+id, "", nil)
		j := decodeJob(t, st, b)
		if j.Status != "queued" || time.Now().After(deadline) {
			return j
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitDone polls a job until it has ended. A job that is not hung always ends, however busy
// the machine: only the test's own deadline bounds the wait.
func (ts *testServer) waitDone(t testing.TB, id string) jobReply {
	t.Helper()
	for {
		st, b := ts.call(t, http.MethodGet, "/v1/videos/"+id, "", nil)
		if j := decodeJob(t, st, b); j.Status != "queued" {
			return j
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("job %s still queued when the test ended", id)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// video creates a video job, waits for it to complete and returns the job and its MP4.
func (ts *testServer) video(t testing.TB, body map[string]any) (jobReply, []byte) {
	t.Helper()
	st, b := ts.postJSON(t, "/v1/videos", body)
	j := ts.waitDone(t, decodeJob(t, st, b).ID)
	if j.Status != "completed" {
		t.Fatalf("job %s: status %s, want completed (%+v)", j.ID, j.Status, j.Error)
	}
	st, mp4 := ts.call(t, http.MethodGet, "/v1/videos/"+j.ID+"/content", "", nil)
	if st != http.StatusOK {
		t.Fatalf("content of %s: status %d: %s", j.ID, st, mp4)
	}
	return j, mp4
}

func probeBytes(t testing.TB, name string, data []byte) (media.Info, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return media.OnPath().Probe(t.Context(), p)
}

func decodePNG(t testing.TB, data []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// frames decodes every frame of an MP4 to packed RGB.
func frames(t testing.TB, mp4 []byte, w, h int) [][]byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "v.mp4")
	if err := os.WriteFile(p, mp4, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), "ffmpeg", "-nostdin", "-loglevel", "error", "-i", p, "-f", "rawvideo", "-pix_fmt", "rgb24", "-").Output()
	if err != nil {
		t.Fatalf("decode %s: %v", p, err)
	}
	n := 3 * w * h
	if len(out)%n != 0 {
		t.Fatalf("decoded %d bytes, not a multiple of a %dx%d frame", len(out), w, h)
	}
	var fs [][]byte
	for i := 0; i < len(out); i += n {
		fs = append(fs, out[i:i+n])
	}
	return fs
}

func rgbOf(img image.Image) ([]byte, int, int) {
	return media.RGB24(img), img.Bounds().Dx(), img.Bounds().Dy()
}

// ssim is the mean SSIM over the three channels of two packed RGB images (7×7 uniform windows,
// sample covariance, fully inside windows only: scikit-image's defaults).
func ssim(a, b []byte, w, h int) float64 {
	const r, n = 3, 49
	c1, c2 := (0.01*255)*(0.01*255), (0.03*255)*(0.03*255)
	var total float64
	var count int
	for ch := range 3 {
		for y := r; y < h-r; y++ {
			for x := r; x < w-r; x++ {
				var sa, sb, saa, sbb, sab float64
				for dy := -r; dy <= r; dy++ {
					for dx := -r; dx <= r; dx++ {
						i := 3*((y+dy)*w+x+dx) + ch
						va, vb := float64(a[i]), float64(b[i])
						sa, sb, saa, sbb, sab = sa+va, sb+vb, saa+va*va, sbb+vb*vb, sab+va*vb
					}
				}
				ma, mb := sa/n, sb/n
				va := (saa - n*ma*ma) / (n - 1)
				vb := (sbb - n*mb*mb) / (n - 1)
				cov := (sab - n*ma*mb) / (n - 1)
				total += (2*ma*mb + c1) * (2*cov + c2) / ((ma*ma + mb*mb + c1) * (va + vb + c2))
				count++
			}
		}
	}
	return total / float64(count)
}

// stddev is the standard deviation of all channel values: a flat image has none.
func stddev(p []byte) float64 {
	var s, ss float64
	for _, v := range p {
		s += float64(v)
		ss += float64(v) * float64(v)
	}
	m := s / float64(len(p))
	return math.Sqrt(max(0, ss/float64(len(p))-m*m))
}

// perfRecords reads performance.log, failing on any line that is not a whole JSON record.
func perfRecords(t testing.TB, dir string) []perfRecord {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, PerfLogName))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []perfRecord
	for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var r perfRecord
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("performance.log line %d: %v: %s", i+1, err, line)
		}
		out = append(out, r)
	}
	return out
}

// eventTimeout bounds the wait for something sure to happen soon (a log line, a perf record,
// a shutdown): only a broken server reaches it, so it is far above what a loaded machine can
// delay. Tests wait for the event, never for a guessed time.
const eventTimeout = 30 * time.Second

// waitLog waits until the server's log holds want: the proof that the server got that far.
func waitLog(t testing.TB, log *syncBuffer, want string) {
	t.Helper()
	for deadline := time.Now().Add(eventTimeout); !strings.Contains(log.String(), want); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the log never said %q:\n%s", want, log)
		}
	}
}

// waitRecords waits until performance.log holds n records.
func waitRecords(t testing.TB, dir string, n int) []perfRecord {
	t.Helper()
	deadline := time.Now().Add(eventTimeout)
	for {
		recs := perfRecords(t, dir)
		if len(recs) >= n || time.Now().After(deadline) {
			if len(recs) != n {
				t.Fatalf("performance.log has %d records, want %d", len(recs), n)
			}
			return recs
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprint(err))
	}
	return v
}

// testPicture is a small input image with some structure.
func testPicture(w, h, variant int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			o := img.PixOffset(x, y)
			img.Pix[o] = byte(x * 255 / w)
			img.Pix[o+1] = byte(y * 255 / h)
			img.Pix[o+2] = byte(((x/8 + y/8 + variant) % 2) * 200)
			img.Pix[o+3] = 255
		}
	}
	return img
}

func encodeTestPNG(w, h int) ([]byte, error) { return media.EncodePNG(testPicture(w, h, 0)) }

// httptestServer serves h for the test and closes both at its end.
func httptestServer(t testing.TB, h *Handler) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	t.Cleanup(h.Close)
	return s
}
