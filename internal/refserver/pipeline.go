package refserver

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/clock"
	"github.com/diffusion-check/diffusion-check/internal/fault"
	"github.com/diffusion-check/diffusion-check/internal/media"
)

// Memory model (MiB): the weights set the load peak; a request adds a workspace plus
// activations proportional to its pixels × frames × images. Deterministic, so baselines hold.
const (
	loadReservedMiB  = 3010.0
	loadAllocatedMiB = 2874.5
	workspaceMiB     = 384.0
	activationBytes  = 48.0 // per pixel per frame
)

// Stage times other than denoising and decoding, as multiples of the step time.
const (
	textEncodingSteps = 1.5
	imageEncodingStep = 1.0
	latentPrepSteps   = 0.5
	warmupFactor      = 1.6 // step 0 is slower, as a real first step (kernel warm-up)
)

var (
	// errCrashed means the crash-at fault ended the "process" during this request.
	errCrashed = errors.New("server crashed (fault crash-at)")
	// errHung means the hang-at fault held this request until the server stopped.
	errHung = errors.New("request hung (fault hang-at) until the server stopped")
)

// memory is the memory_snapshots of one request.
type memory struct {
	LoadPeak    peak `json:"load_peak"`
	RuntimePeak peak `json:"runtime_peak"`
}

type peak struct {
	PeakReservedMB  float64 `json:"peak_reserved_mb"`
	PeakAllocatedMB float64 `json:"peak_allocated_mb"`
}

func memoryFor(g *genRequest, number int, growMiB float64) memory {
	act := float64(g.w) * float64(g.h) * float64(g.frames) * float64(g.n) * activationBytes / (1 << 20)
	grow := float64(number-1) * growMiB
	reserved := loadReservedMiB + 2*math.Ceil((workspaceMiB+act)/2) + grow // allocator blocks of 2 MiB
	allocated := loadAllocatedMiB + 0.92*(workspaceMiB+act) + grow
	return memory{
		LoadPeak:    peak{loadReservedMiB, loadAllocatedMiB},
		RuntimePeak: peak{round(reserved, 1), round(allocated, 1)},
	}
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

type stageTime struct {
	Name string  `json:"name"`
	Ms   float64 `json:"execution_time_ms"`
}

// outcome is what one generation produced, with the timings the perf record reports.
type outcome struct {
	media  [][]byte // encoded images, or the one MP4
	stages []stageTime
	steps  []float64 // ms
	total  time.Duration
	mem    memory
}

// run describes one generation while it runs.
type run struct {
	id       string
	number   int // request number, from 1
	req      *genRequest
	progress func(percent int) // may be nil
}

func ms(d time.Duration) float64 { return round(float64(d)/float64(time.Millisecond), 3) }

func (h *Handler) stepDuration(factor float64) time.Duration {
	return time.Duration(factor * h.cfg.StepMs * float64(time.Millisecond))
}

// generate runs the pipeline of one request: text encoding, image encoding (inputs only),
// latent preparation, denoising (one timed sleep per step) and decoding (the real render and
// encode). Every stage is measured, or with computed timing reported as planned (timing.go).
// Faults of this request number apply here.
func (h *Handler) generate(ctx context.Context, r run) (*outcome, error) {
	gn := &generation{h: h, r: r, sw: newStopwatch(h.cfg.Timing), out: &outcome{}}
	scenes, base, err := gn.prepare(ctx)
	if err != nil {
		return nil, err
	}
	gn.report(5)
	if err := gn.denoise(ctx); err != nil {
		return nil, err
	}
	if err := gn.decode(ctx, scenes, base); err != nil {
		return nil, err
	}
	gn.report(95)
	gn.out.total = gn.sw.total()
	gn.outputFaults()
	return gn.out, nil
}

// generation is one generate call: its request, its stopwatch, and the outcome built so far.
type generation struct {
	h   *Handler
	r   run
	sw  *stopwatch
	out *outcome
}

// stage records stage name's time, begun at since, nominal its planned length.
func (gn *generation) stage(name string, since time.Time, nominal time.Duration) {
	gn.out.stages = append(gn.out.stages, stageTime{name, ms(gn.sw.stage(since, nominal))})
}

// report passes the request's progress, in percent, to whoever asked for it.
func (gn *generation) report(p int) {
	if gn.r.progress != nil {
		gn.r.progress(p)
	}
}

// prepare runs the stages before denoising: text encoding, image encoding (inputs only) and
// latent preparation, which makes the request's scenes (drifted by its drift faults); base is
// the blend of the input images, nil without inputs.
func (gn *generation) prepare(ctx context.Context) (scenes []*scene, base []byte, err error) {
	h, g := gn.h, gn.r.req
	t := time.Now()
	key := sceneKey{Prompt: g.prompt, Negative: g.negative, Seed: g.seed, Inputs: g.inputHash}
	if err := clock.Sleep(ctx, h.stepDuration(textEncodingSteps)); err != nil {
		return nil, nil, err
	}
	gn.stage("TextEncodingStage", t, h.stepDuration(textEncodingSteps))

	if len(g.inputs) > 0 {
		t = time.Now()
		base = blendInputs(g.inputs, g.w, g.h)
		if err := clock.Sleep(ctx, h.stepDuration(imageEncodingStep)); err != nil {
			return nil, nil, err
		}
		gn.stage("ImageEncodingStage", t, h.stepDuration(imageEncodingStep))
	}

	t = time.Now()
	driftVideo, driftAudio := drifts(&h.cfg.Faults, gn.r.number)
	scenes = make([]*scene, g.n)
	for i := range scenes {
		k := key
		k.Index = i
		scenes[i] = newScene(k.hash(), stepDetail(g.steps), driftVideo)
		if driftAudio != driftVideo {
			scenes[i].tones = newScene(k.hash(), stepDetail(g.steps), driftAudio).tones
		}
	}
	if err := clock.Sleep(ctx, h.stepDuration(latentPrepSteps)); err != nil {
		return nil, nil, err
	}
	gn.stage("LatentPreparationStage", t, h.stepDuration(latentPrepSteps))
	return scenes, base, nil
}

// denoise runs the denoising stage, slowed by the slow faults, holding the memory of the
// mem-spike fault while it runs, and crashing or hanging half-way for those faults.
func (gn *generation) denoise(ctx context.Context) error {
	h, g, r, fl := gn.h, gn.r.req, gn.r, &gn.h.cfg.Faults
	t := time.Now()
	factor := 1.0
	if fl.SlowAfter > 0 && r.number > fl.SlowAfter {
		factor = fl.SlowFactor
	}
	if fl.SlowAt > 0 && r.number == fl.SlowAt {
		factor *= fl.SlowAtFactor
	}
	var spike []byte
	if fl.MemSpikeAt == r.number {
		spike = hold(fl.MemSpikeMiB)
	}
	steps, denoise, err := h.denoise(ctx, gn.sw, g.steps, func(i int) float64 {
		if i == 0 {
			return factor * warmupFactor
		}
		return factor
	}, func(i int) error { return gn.midwayFault(ctx, i) }, func(i int) { gn.report(5 + 85*(i+1)/g.steps) })
	if err != nil {
		return err
	}
	gn.out.steps = steps
	gn.stage("DenoisingStage", t, denoise)
	if spike != nil {
		runtime.KeepAlive(spike)
		debug.FreeOSMemory() // the spike ends here, in the process's resident memory too
	}
	return nil
}

// midwayFault is called before denoising step i: half-way through, the crash-at fault ends
// the "process" and the hang-at fault holds the request until it is cancelled or the server
// stops.
func (gn *generation) midwayFault(ctx context.Context, i int) error {
	h, g, r, fl := gn.h, gn.r.req, gn.r, &gn.h.cfg.Faults
	if i != g.steps/2 {
		return nil
	}
	if fl.CrashAt == r.number {
		h.crash(r)
		return errCrashed
	}
	if fl.HangAt == r.number {
		h.logf("WARNING", "[%s #%d] denoising step %d/%d is taking long", r.id, r.number, i+1, g.steps)
		select {
		case <-ctx.Done():
		case <-h.stopping:
		}
		return errHung
	}
	return nil
}

// decode runs the decoding stage: the real render and encode of the scenes (one video of the
// first, or one image each), over base when the request has inputs.
func (gn *generation) decode(ctx context.Context, scenes []*scene, base []byte) error {
	h, g := gn.h, gn.r.req
	t := time.Now()
	var err error
	if g.kind == kindVideo {
		var mp4 []byte
		mp4, err = h.encodeVideo(ctx, g, scenes[0], base)
		gn.out.media = [][]byte{mp4}
	} else {
		gn.out.media, err = h.encodeImages(ctx, g, scenes, base)
	}
	if err != nil {
		return err
	}
	gn.stage("DecodingStage", t, h.stepDuration(decodingStepsPerFrame*float64(g.frames*g.n)))
	return nil
}

// outputFaults applies this request's output faults to the finished outcome: corrupt-at
// halves each file, empty-at empties them, and the memory snapshot grows with mem-grow and
// mem-spike.
func (gn *generation) outputFaults() {
	out, fl, number := gn.out, &gn.h.cfg.Faults, gn.r.number
	if fl.CorruptAt == number {
		for i, m := range out.media {
			out.media[i] = m[:len(m)/2]
		}
	}
	if fl.EmptyAt == number {
		for i := range out.media {
			out.media[i] = []byte{}
		}
	}
	out.mem = memoryFor(gn.r.req, number, fl.MemGrowMiB)
	if fl.MemSpikeAt == number {
		out.mem.RuntimePeak.PeakReservedMB = round(out.mem.RuntimePeak.PeakReservedMB+fl.MemSpikeMiB, 1)
		out.mem.RuntimePeak.PeakAllocatedMB = round(out.mem.RuntimePeak.PeakAllocatedMB+fl.MemSpikeMiB, 1)
	}
}

// hold allocates mib MiB and writes every page of it, so that the process's anonymous
// resident memory really grows by that much (mem-spike-at): what a sampler of the process
// tree sees of an activation spike.
func hold(mib float64) []byte {
	b := make([]byte, int(mib*(1<<20)))
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	return b
}

func (h *Handler) encodeImages(ctx context.Context, g *genRequest, scenes []*scene, base []byte) ([][]byte, error) {
	var out [][]byte
	mark := h.loras.mark()
	for _, s := range scenes {
		img := image.NewRGBA(image.Rect(0, 0, g.w, g.h))
		newCanvas(s, g.w, g.h, base).frame(0, img.Pix, 4)
		brighten(img.Pix, 4, h.cfg.Faults.Offset)
		markPixels(img.Pix, 4, mark)
		var b []byte
		var err error
		switch g.format {
		case "jpeg":
			b, err = media.EncodeJPEG(img, 92)
		case "webp":
			b, err = h.cfg.Tools.EncodeWebP(ctx, img, 92)
		default:
			b, err = media.EncodePNG(img)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// encodeVideo renders the frames (time runs over [0, 1) across the clip) into an MP4 and
// returns its bytes. The input image, if any, is blended into every frame.
func (h *Handler) encodeVideo(ctx context.Context, g *genRequest, s *scene, base []byte) ([]byte, error) {
	f, err := os.CreateTemp("", "refserver-*.mp4")
	if err != nil {
		return nil, err
	}
	path := f.Name()
	defer os.Remove(path)
	if err := f.Close(); err != nil {
		return nil, err
	}
	c := newCanvas(s, g.w, g.h, base)
	var audio *media.ToneSpec
	if g.audio {
		audio = &media.ToneSpec{Tones: s.tones}
	}
	mark := h.loras.mark()
	frame := func(i int, rgb []byte) {
		c.frame(float64(i)/float64(g.frames), rgb, 3)
		brighten(rgb, 3, h.cfg.Faults.Offset)
		markPixels(rgb, 3, mark)
	}
	if err := h.cfg.Tools.EncodeVideo(ctx, path, g.w, g.h, g.frames, g.fps, frame, audio); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

// drifts says whether the pictures and the audio of request number drift under the faults:
// after K (drift-after, video-drift-after, audio-drift-after) or at K alone (drift-at).
func drifts(fl *fault.Set, number int) (video, audio bool) {
	after := func(k int) bool { return k > 0 && number > k }
	at := fl.DriftAt > 0 && number == fl.DriftAt
	return after(fl.DriftAfter) || after(fl.VideoDriftAfter) || at, after(fl.DriftAfter) || after(fl.AudioDriftAfter) || at
}

// brighten adds levels to the R, G and B samples of packed pixels of bpp bytes (clamped at
// 255; alpha untouched): the offset fault, every output shifted uniformly, as another GPU
// class's numbers would shift it.
func brighten(pix []byte, bpp, levels int) {
	if levels == 0 {
		return
	}
	for i := 0; i+2 < len(pix); i += bpp {
		for ch := i; ch < i+3; ch++ {
			pix[ch] = byte(min(255, int(pix[ch])+levels))
		}
	}
}

// blendInputs resamples the input images to w×h (bilinear) and averages them, as packed RGB.
func blendInputs(imgs []image.Image, w, h int) []byte {
	acc := make([]int, 3*w*h)
	for _, img := range imgs {
		b := img.Bounds()
		rgba := image.NewRGBA(b)
		draw.Draw(rgba, b, img, b.Min, draw.Src)
		sw, sh := b.Dx(), b.Dy()
		at := func(x, y, ch int) float64 { return float64(rgba.Pix[rgba.PixOffset(b.Min.X+x, b.Min.Y+y)+ch]) }
		for y := range h {
			fy := math.Max(0, math.Min(float64(sh-1), (float64(y)+0.5)*float64(sh)/float64(h)-0.5))
			y0 := int(fy)
			y1, wy := min(y0+1, sh-1), fy-float64(y0)
			for x := range w {
				fx := math.Max(0, math.Min(float64(sw-1), (float64(x)+0.5)*float64(sw)/float64(w)-0.5))
				x0 := int(fx)
				x1, wx := min(x0+1, sw-1), fx-float64(x0)
				for ch := range 3 {
					v := (at(x0, y0, ch)*(1-wx)+at(x1, y0, ch)*wx)*(1-wy) + (at(x0, y1, ch)*(1-wx)+at(x1, y1, ch)*wx)*wy
					acc[3*(y*w+x)+ch] += int(math.Round(v))
				}
			}
		}
	}
	out := make([]byte, len(acc))
	for i, v := range acc {
		out[i] = byte((v + len(imgs)/2) / len(imgs))
	}
	return out
}

// crash prints what a dying Python process prints and ends the process through cfg.Exit.
func (h *Handler) crash(r run) {
	h.logf("INFO", "[%s #%d] denoising step %d/%d", r.id, r.number, r.req.steps/2+1, r.req.steps)
	// Short, as Python's faulthandler output ends, so that the crash stays in a log tail.
	h.writeLog("Fatal Python error: Segmentation fault\n\n" +
		"Current thread 0x00007f4d2a9fe740 (most recent call first):\n" +
		"  File \"/sgl-workspace/sglang/python/sglang/multimodal_gen/runtime/pipelines/stages/denoising.py\", line 412 in forward\n" +
		fmt.Sprintf("Segmentation fault (core dumped) [request %s, fault crash-at=%d]\n", r.id, r.number))
	h.markCrashed()
	h.cfg.Exit(139)
}

// denoise is the denoising loop of every generation, a request's pipeline and a realtime
// chunk alike: step i sleeps stepDuration(factor(i)); before it, before(i) may end the loop
// with its error (a crash or hang fault), and after it after(i) (nil: nothing) reports
// progress. It returns each step's time as sw reports it and the planned total.
func (h *Handler) denoise(ctx context.Context, sw *stopwatch, n int,
	factor func(int) float64, before func(int) error, after func(int)) ([]float64, time.Duration, error) {
	steps := make([]float64, 0, n)
	var planned time.Duration
	for i := range n {
		if before != nil {
			if err := before(i); err != nil {
				return nil, 0, err
			}
		}
		st := time.Now()
		d := h.stepDuration(factor(i))
		if err := clock.Sleep(ctx, d); err != nil {
			return nil, 0, err
		}
		planned += d
		steps = append(steps, ms(sw.took(st, d)))
		if after != nil {
			after(i)
		}
	}
	return steps, planned, nil
}
