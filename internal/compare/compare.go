package compare

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/diffusion-check/diffusion-check/internal/inputfile"
	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/internal/metrics"
	"github.com/diffusion-check/diffusion-check/internal/proc"
)

// Frame is the metrics of one compared frame.
type Frame struct {
	Index       int     // 0-based frame index in the output
	SSIM        float64 // scikit-image structural_similarity(out, gt, channel_axis=2, data_range=255)
	PSNR        float64 // dB, data_range 255; +Inf when the frames are identical
	MeanAbsDiff float64 // mean |out − gt| over all samples, 0–255
}

// Result is a comparison of an output with its ground truth.
type Result struct {
	Kind          string // "image" or "video"
	Width, Height int
	// Frames is the output's frame count: 1 for an image, every frame of a video (also when
	// KeyFrames compared only a few of them).
	Frames int
	// PerFrame holds every compared frame in index order: one for an image, all of a video for
	// Videos, the key frames for KeyFrames.
	PerFrame []Frame
	// Summaries over PerFrame. MeanPSNR is +Inf when any frame is identical; MinPSNR is +Inf only
	// when all are.
	MinSSIM, MeanSSIM, MinPSNR, MeanPSNR, MaxMeanAbsDiff, MeanMeanAbsDiff float64
	// WorstFrame is the index of the frame with the lowest SSIM (the first such frame).
	WorstFrame int
}

// MismatchError says that the output cannot be compared with its ground truth because their
// shapes differ: size or frame count. It is a failure of the output, never resized away.
type MismatchError struct {
	GT, Out string
	What    string // e.g. "size: ground truth 64x48, output 32x32"
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("%s does not match ground truth %s: %s", e.Out, e.GT, e.What)
}

// Helpers is how a comparison runs its decoders and its metric: the ffmpeg tools, whose
// niceness (media.Tools.Niced) the metric's threads in this process take too (proc.Nice.Run),
// and the thread budget, Threads, for its metric and for each ffmpeg decoder it runs instead
// of one per core: so that a validation leaves the cores to the server it measures. The zero
// value is the ffmpeg on PATH (media.OnPath), one thread per core, this process's priority.
type Helpers struct {
	Tools   media.Tools
	Threads int

	tune func(*layout) // changes every pass's layout: for benchmarks that compare layouts
}

// threads is the thread budget of h, and whether one was set.
func (h Helpers) threads() (int, bool) {
	if h.Threads <= 0 {
		return max(1, runtime.GOMAXPROCS(0)), false
	}
	return h.Threads, true
}

// decodeOptions are the options of a whole decode under h's thread budget: ffmpeg's own
// choice of threads without one.
func (h Helpers) decodeOptions() media.DecodeOptions {
	opts := media.DecodeOptions{Whole: true}
	if n, set := h.threads(); set {
		opts.Threads = n
	}
	return opts
}

// layout is how one pass of a comparison lays its work on the cores.
type layout struct {
	workers int       // the metric's goroutines
	decode  int       // threads of each ffmpeg decoder
	frames  int       // frames each stream holds decoded ahead of the metric
	nice    proc.Nice // of the metric's workers
}

// layout is the layout of a pass that runs decoders ffmpeg decoders. The metric takes a
// worker per thread of the budget (per core without one) and the decoders share the same
// threads: on two cores, two single-threaded decoders spend less CPU than two that each run a
// thread per core, for the same frames; on sixteen, one thread per decoder made the decode of
// a 720p H.264 pair the bottleneck (docs/performance.md). The workers run at the tools'
// niceness. On 16 cores no other layout BenchmarkCompareLayouts tried (the workers niced, fewer
// or more decoder threads, fewer workers, more buffers) measured better beyond the noise.
func (h Helpers) layout(decoders int) layout {
	n, _ := h.threads()
	l := layout{decode: max(1, n/max(decoders, 1)), nice: h.Tools.Nice()}
	l.setWorkers(n)
	if h.tune != nil {
		h.tune(&l)
	}
	return l
}

// setWorkers gives the metric n workers, and each stream two frames more than that to hold.
func (l *layout) setWorkers(n int) {
	l.workers, l.frames = n, n+2
}

// minSide is the smallest width and height SSIM's 7×7 window accepts.
const minSide = 7

func checkSize(gt, out string, gw, gh, ow, oh int) error {
	if gw != ow || gh != oh {
		return &MismatchError{GT: gt, Out: out, What: fmt.Sprintf("size: ground truth %dx%d, output %dx%d", gw, gh, ow, oh)}
	}
	if ow < minSide || oh < minSide {
		return fmt.Errorf("compare %s: %dx%d is smaller than SSIM's 7x7 window", out, ow, oh)
	}
	return nil
}

// Images compares two still images (PNG exactly; JPEG, WebP and others through ffmpeg).
func Images(ctx context.Context, gt, out string) (Result, error) {
	return (*Cache)(nil).Images(ctx, gt, out)
}

// Images is Images with the ground truth decoded once for all the comparisons of the cache.
func (c *Cache) Images(ctx context.Context, gt, out string) (Result, error) {
	type decoded struct {
		rgb  []byte
		w, h int
		err  error
	}
	var g, o decoded
	var wg sync.WaitGroup
	wg.Go(func() { g.rgb, g.w, g.h, g.err = c.image(ctx, gt) })
	o.rgb, o.w, o.h, o.err = c.helpersOf().Tools.DecodeImage(ctx, out)
	wg.Wait()
	if err := errors.Join(g.err, o.err); err != nil {
		return Result{}, err
	}
	if err := checkSize(gt, out, g.w, g.h, o.w, o.h); err != nil {
		return Result{}, err
	}
	var m metrics.FrameMetrics
	c.helpersOf().Tools.Nice().Run(func() {
		var s metrics.SSIMScratch
		m = s.Metrics(o.rgb, g.rgb, o.w, o.h)
	})
	res := Result{Kind: "image", Width: o.w, Height: o.h, Frames: 1,
		PerFrame: []Frame{{Index: 0, SSIM: m.SSIM, PSNR: m.PSNR, MeanAbsDiff: m.MeanAbsDiff}}}
	res.summarise()
	return res, nil
}

// summarise fills the summaries from PerFrame.
func (r *Result) summarise() {
	if len(r.PerFrame) == 0 {
		return
	}
	r.MinSSIM, r.MinPSNR = math.Inf(1), math.Inf(1)
	var sumSSIM, sumPSNR, sumMAD float64
	for _, f := range r.PerFrame {
		if f.SSIM < r.MinSSIM {
			r.MinSSIM, r.WorstFrame = f.SSIM, f.Index
		}
		r.MinPSNR = math.Min(r.MinPSNR, f.PSNR)
		r.MaxMeanAbsDiff = math.Max(r.MaxMeanAbsDiff, f.MeanAbsDiff)
		sumSSIM += f.SSIM
		sumPSNR += f.PSNR
		sumMAD += f.MeanAbsDiff
	}
	n := float64(len(r.PerFrame))
	r.MeanSSIM, r.MeanPSNR, r.MeanMeanAbsDiff = sumSSIM/n, sumPSNR/n, sumMAD/n
}

// Videos compares every frame of out with the same frame of gt. Both are decoded at once by two
// ffmpeg processes while the frames already read are compared on every core; a few frame
// buffers are reused, so memory does not grow with the video's length. A size or frame-count
// difference is a *MismatchError (with both exact counts); a file that does not decode is an
// error naming it.
func Videos(ctx context.Context, gt, out string) (Result, error) {
	return (*Cache)(nil).Videos(ctx, gt, out)
}

// Videos is Videos with the ground truth decoded once for all the comparisons of the cache:
// the first comparison keeps its frames as they stream past (when they fit), the next ones
// decode only their output.
func (c *Cache) Videos(ctx context.Context, gt, out string) (Result, error) {
	if c == nil {
		return videos(ctx, c.helpersOf(), gt, out, nil, nil, nil)
	}
	// The output's frames, when Output kept them.
	ko := c.keptVideo(out)
	e, err := c.acquire(ctx, gt)
	if err != nil {
		return Result{}, err
	}
	v, _, stream := c.state(e)
	if v != nil || stream {
		e.release()
		return videos(ctx, c.helpersOf(), gt, out, v, nil, ko)
	}
	defer e.release()
	k := &keeper{c: c}
	res, err := videos(ctx, c.helpersOf(), gt, out, nil, k, ko)
	if k.audioKnown && !c.audioState(e).known {
		c.setAudio(e, gtAudio{known: true, rate: k.audioRate})
	}
	switch {
	case k.over:
		c.set(e, nil, nil, true)
	case k.whole != nil:
		c.set(e, k.whole, nil, false)
	default:
		// Not decoded to its end (the comparison stopped early): try again next time.
		k.giveUp()
	}
	return res, err
}

// VideosEach compares each of outs with gt as Videos does (result k and error k are those of
// Videos(ctx, gt, outs[k])), but in one pass: gt is decoded once for all of them, every file
// at the same time, and each ground-truth frame converted once for every output. A failed or
// mismatched output does not stop the others. It reads what the cache holds: gt's frames when
// kept (else gt is decoded, once, and not kept: it is needed only during the pass) and the
// outputs' frames kept by Output. What gt's decode says of its audio track is remembered, for
// Audio. A nil cache keeps nothing.
func (c *Cache) VideosEach(ctx context.Context, gt string, outs []string) ([]Result, []error) {
	keptOuts := make([]*keptVideo, len(outs))
	for k, out := range outs {
		keptOuts[k] = c.keptVideo(out)
	}
	if c == nil {
		return videosEach(ctx, c.helpersOf(), gt, outs, nil, nil, keptOuts)
	}
	e, err := c.acquire(ctx, gt)
	if err != nil {
		errs := make([]error, len(outs))
		for k := range errs {
			errs[k] = err
		}
		return make([]Result, len(outs)), errs
	}
	defer e.release()
	if v, _, _ := c.state(e); v != nil {
		return videosEach(ctx, c.helpersOf(), gt, outs, v, nil, keptOuts)
	}
	k := &keeper{c: c, over: true} // keeps nothing: learns about the audio
	res, errs := videosEach(ctx, c.helpersOf(), gt, outs, nil, k, keptOuts)
	if k.audioKnown && !c.audioState(e).known {
		c.setAudio(e, gtAudio{known: true, rate: k.audioRate})
	}
	return res, errs
}

// videos compares out with gt: gt's kept frames when kept is not nil, else gt decoded (and its
// frames handed to keep, when not nil); out's kept frames when keptOut is not nil, else out
// decoded.
func videos(ctx context.Context, h Helpers, gt, out string, kept *keptVideo, keep *keeper, keptOut *keptVideo) (Result, error) {
	res, errs := videosEach(ctx, h, gt, []string{out}, kept, keep, []*keptVideo{keptOut})
	return res[0], errs[0]
}

// videosEach compares each of outs with gt, frame by frame, reading gt once for all of them:
// gt's kept frames when kept is not nil, else gt decoded (its frames handed to keep, when not
// nil); each output's kept frames (keptOuts[k]) or its decode. Every file is decoded at once,
// and each ground-truth frame converted to rgb24 once for all the outputs. Result k and error
// k are those of comparing outs[k] alone: an output that fails or differs in shape does not
// stop the others.
func videosEach(ctx context.Context, h Helpers, gt string, outs []string, kept *keptVideo, keep *keeper, keptOuts []*keptVideo) ([]Result, []error) {
	var fresh keeper
	if keep != nil {
		fresh = *keep
	}
	res, errs := videosOnce(ctx, h, gt, outs, kept, keep, keptOuts)
	if !slices.ContainsFunc(errs, unproven) {
		return res, errs
	}
	// A decode found that converting yuv420p here is not ffmpeg's: the frames it gave are
	// suspect, and the process now knows to take ffmpeg's rgb24 for such files.
	if keep != nil {
		keep.giveUp()
		*keep = fresh
	}
	return videosOnce(ctx, h, gt, outs, kept, keep, keptOuts)
}

// unproven says whether err is a decode's failed proof of its yuv420p conversion
// (media.ErrYUVDiffers): decoding again gives the right frames.
func unproven(err error) bool { return errors.Is(err, media.ErrYUVDiffers) }

// retryUnproven runs try, and once more when a decode in it failed its proof (unproven): what
// the first try gave rests on suspect frames, and the process now knows to take ffmpeg's rgb24
// for such files. try must keep nothing of a failed try (Output's keeper gives up on errors).
func retryUnproven[T any](try func() (T, error)) (T, error) {
	v, err := try()
	if unproven(err) {
		return try()
	}
	return v, err
}

// videosOnce is one try of videosEach.
func videosOnce(ctx context.Context, h Helpers, gt string, outs []string, kept *keptVideo, keep *keeper, keptOuts []*keptVideo) ([]Result, []error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p, g := openEach(ctx, h, gt, outs, kept, keptOuts)
	defer p.close()
	if p.alive == 0 {
		return make([]Result, len(outs)), p.errs
	}
	if keep != nil && kept == nil {
		keep.audioRate, _ = g.Audio()
		keep.audioKnown = true
		// A video whose container says it will not fit is streamed from the start.
		if n := int64(g.Listed()); n > 0 && !keep.c.fits(n*int64(p.gs.form.Size())) {
			keep.over = true
		}
		p.gs.keep = keep
	}
	frames := p.run(ctx)
	if keep != nil && !keep.over && p.gs.eof {
		keep.whole = &keptVideo{form: p.gs.form, w: p.w, h: p.h, frames: keep.frames}
	}
	return p.results(frames), p.errs
}

// pass is one comparison of several outputs with a ground truth: the ground truth's stream
// and the outputs' (nil for one not compared: errs says why).
type pass struct {
	lay     layout
	gt      string
	outs    []string
	gs      *stream
	sides   []*stream
	alive   int // outputs compared
	w, h    int
	errs    []error
	readers []*media.FrameReader // to close
}

// openEach opens every file not kept at once (each open waits for its ffprobe run, its ffmpeg
// decoding beside it), under the layout of that many decoders, and checks the outputs' sizes;
// it returns the ground truth's reader too (nil when kept).
func openEach(ctx context.Context, h Helpers, gt string, outs []string, kept *keptVideo, keptOuts []*keptVideo) (*pass, *media.FrameReader) {
	decoders := 0
	if kept == nil {
		decoders++
	}
	for _, k := range keptOuts {
		if k == nil {
			decoders++
		}
	}
	lay := h.layout(decoders)
	p := &pass{lay: lay, gt: gt, outs: outs, sides: make([]*stream, len(outs)), errs: make([]error, len(outs))}
	var g *media.FrameReader
	var gerr error
	readers, oerrs := make([]*media.FrameReader, len(outs)), make([]error, len(outs))
	opts := media.DecodeOptions{Threads: lay.decode, Whole: true}
	var open sync.WaitGroup
	if kept == nil {
		open.Go(func() { g, gerr = h.Tools.OpenFramesWith(ctx, gt, opts) })
	}
	for k, out := range outs {
		if keptOuts[k] == nil {
			open.Go(func() { readers[k], oerrs[k] = h.Tools.OpenFramesWith(ctx, out, opts) })
		}
	}
	open.Wait()
	p.readers = append([]*media.FrameReader{g}, readers...)
	if gerr == nil {
		p.gs, p.w, p.h, gerr = openSide(ctx, g, kept, lay.frames)
	}
	for k, out := range outs {
		if p.errs[k] = errors.Join(gerr, oerrs[k]); p.errs[k] != nil {
			continue
		}
		s, ow, oh, err := openSide(ctx, readers[k], keptOuts[k], lay.frames)
		if err == nil {
			err = checkSize(gt, out, p.w, p.h, ow, oh)
		}
		if p.errs[k] = err; err == nil {
			p.sides[k] = s
			p.alive++
		}
	}
	return p, g
}

func (p *pass) close() {
	for _, r := range p.readers {
		if r != nil {
			r.Close()
		}
	}
}

// streams returns the ground truth's stream and the compared outputs'.
func (p *pass) streams() []*stream {
	all := []*stream{p.gs}
	for _, s := range p.sides {
		if s != nil {
			all = append(all, s)
		}
	}
	return all
}

// run reads every stream at once and compares each ground-truth frame, converted once, with
// the same frame of every output still going, on the layout's workers; it returns each
// output's frames. Every stream is read to its end, to learn its exact length.
func (p *pass) run(ctx context.Context) [][]Frame {
	var wg sync.WaitGroup
	for _, s := range p.streams() {
		wg.Go(func() { s.read(ctx) })
	}
	type job struct {
		index int
		gt    []byte
		outs  [][]byte // by output; nil for one not compared (any more)
	}
	jobs := make(chan job, p.lay.workers+2)
	var mu sync.Mutex
	frames := make([][]Frame, len(p.outs))
	w, h := p.w, p.h
	worker := func() {
		// Every frame is converted to rgb24 a row at a time, into rings of the rows the metric
		// holds, as it walks the frames together: no whole rgb24 frame is written or read back.
		var s metrics.EachScratch
		ring := func() []byte { return make([]byte, metrics.RowsHeld*3*w) }
		gtRing, rings := ring(), make([][]byte, len(p.outs))
		for k := range rings {
			rings[k] = ring()
		}
		var rows []metrics.Rows
		var of []int // the output of each of rows
		for j := range jobs {
			rows, of = rows[:0], of[:0]
			for k, b := range j.outs {
				if b != nil {
					rows, of = append(rows, p.sides[k].form.Rows(b, rings[k])), append(of, k)
				}
			}
			ms := s.Each(rows, p.gs.form.Rows(j.gt, gtRing), w, h)
			mu.Lock()
			for i, k := range of {
				m := ms[i]
				frames[k] = append(frames[k], Frame{Index: j.index, SSIM: m.SSIM, PSNR: m.PSNR, MeanAbsDiff: m.MeanAbsDiff})
			}
			mu.Unlock()
			for _, k := range of {
				p.sides[k].recycle(j.outs[k])
			}
			p.gs.recycle(j.gt)
		}
	}
	for range p.lay.workers {
		// A validation's metric leaves the cores to the server it measures, as its decoders do.
		wg.Go(func() { p.lay.nice.Run(worker) })
	}
	live, alive := slices.Clone(p.sides), p.alive
	for i := 0; alive > 0; i++ {
		a, ok := <-p.gs.full
		if !ok {
			break
		}
		j := job{index: i, gt: a, outs: make([][]byte, len(p.outs))}
		for k, s := range live {
			if s == nil {
				continue
			}
			if j.outs[k], ok = <-s.full; !ok {
				live[k] = nil // this output ended: its count is compared in results
				alive--
			}
		}
		if alive == 0 {
			p.gs.recycle(a)
			break
		}
		jobs <- j
	}
	close(jobs)
	// The ground truth or every output ended: drain the rest to learn the exact lengths.
	for _, s := range p.streams() {
		s.drain()
	}
	wg.Wait()
	return frames
}

// results turns each compared output's frames into its result, or sets its error: a stream
// that failed, or a frame count other than the ground truth's.
func (p *pass) results(frames [][]Frame) []Result {
	res := make([]Result, len(p.outs))
	for k, s := range p.sides {
		if s == nil {
			continue
		}
		if p.errs[k] = errors.Join(p.gs.err, s.err); p.errs[k] != nil {
			continue
		}
		if gn, on := p.gs.frames(), s.frames(); gn != on {
			p.errs[k] = &MismatchError{GT: p.gt, Out: p.outs[k], What: fmt.Sprintf("frame count: ground truth %d, output %d", gn, on)}
			continue
		}
		slices.SortFunc(frames[k], func(a, b Frame) int { return a.Index - b.Index })
		res[k] = Result{Kind: "video", Width: p.w, Height: p.h, Frames: p.gs.frames(), PerFrame: frames[k]}
		res[k].summarise()
	}
	return res
}

// openSide returns the stream of one side of a comparison and its frame size: its kept frames
// when kept is not nil, else what r decodes.
func openSide(ctx context.Context, r *media.FrameReader, kept *keptVideo, nbuf int) (s *stream, w, h int, err error) {
	if kept != nil {
		return keptStream(ctx, kept, nbuf), kept.w, kept.h, nil
	}
	w, h = r.Size()
	return newStream(r, nbuf), w, h, nil
}

// stream hands on one side's frames in their raw form (media.RawFormat): decoded into recycled
// buffers, or the frames a cache kept.
type stream struct {
	r          *media.FrameReader // nil for kept frames
	form       media.RawFormat
	free, full chan []byte
	kept       int     // kept frames: how many
	keep       *keeper // when not nil, a copy of every frame read goes there
	eof        bool    // the reader reached the end of the video without error
	err        error   // the reader's error other than io.EOF; read once full is closed
}

func newStream(r *media.FrameReader, nbuf int) *stream {
	form := r.Format()
	s := &stream{r: r, form: form, free: make(chan []byte, nbuf), full: make(chan []byte, nbuf)}
	for range nbuf {
		s.free <- make([]byte, form.Size())
	}
	return s
}

// keptStream hands on a kept video's frames; read is a no-op, they are already there.
func keptStream(ctx context.Context, v *keptVideo, nbuf int) *stream {
	s := &stream{form: v.form, full: make(chan []byte, nbuf), kept: len(v.frames)}
	go func() {
		defer close(s.full)
		for _, f := range v.frames {
			select {
			case s.full <- f:
			case <-ctx.Done():
				s.err = ctx.Err()
				return
			}
		}
	}()
	return s
}

// read decodes frames into free buffers and hands them on until the stream ends, fails or ctx
// is cancelled; then it closes full.
func (s *stream) read(ctx context.Context) {
	if s.r == nil {
		return
	}
	defer close(s.full)
	for {
		var buf []byte
		select {
		case buf = <-s.free:
		case <-ctx.Done():
			s.err = ctx.Err()
			return
		}
		if err := s.r.NextRaw(buf); err != nil {
			if errors.Is(err, io.EOF) {
				s.eof = true
			} else {
				s.err = err
			}
			return
		}
		s.keep.add(buf)
		s.full <- buf
	}
}

// recycle gives a frame buffer back once compared.
func (s *stream) recycle(buf []byte) {
	if s.r != nil {
		s.free <- buf
	}
}

// frames returns the side's exact frame count, once full is closed.
func (s *stream) frames() int {
	if s.r == nil {
		return s.kept
	}
	return s.r.Frames()
}

// drain takes and recycles frames until the stream has ended.
func (s *stream) drain() {
	for buf := range s.full {
		s.recycle(buf)
	}
}

// Key-frame positions for KeyFrames, resolved from the output's frame count N. A non-negative
// key is a frame index; a negative one counts from the end as in Python (-1 is the last frame);
// FrameMid is N//2. These are SGLang's key frames: frame 0, N//2 and N−1.
const (
	FrameFirst = 0
	FrameLast  = -1
	FrameMid   = math.MinInt
)

// resolve turns a KeyFrames key into a frame index of a video of n frames.
func resolve(key, n int) int {
	switch {
	case key == FrameMid:
		return n / 2
	case key < 0:
		return n + key
	}
	return key
}

// KeyFrames compares some frames of the video out with ground-truth images, for ground truth
// kept as SGLang keeps it: a few PNG key frames rather than a whole video (the files are
// baselines' GTEntry.KeyFrames). gtFrames maps a frame key (an index, a negative index from
// the end, or FrameMid) to an image file. The output's frame count comes from its container
// and is checked against the frames that actually decode; when the container does not say,
// the video is decoded twice. A key outside the output or an image of another size is a
// *MismatchError. The key-frame images are decoded once for all the comparisons of the cache
// (a nil cache keeps nothing).
func (c *Cache) KeyFrames(ctx context.Context, gtFrames map[int]string, out string) (Result, error) {
	if len(gtFrames) == 0 {
		return Result{}, fmt.Errorf("compare %s: no ground-truth key frames", out)
	}
	return retryUnproven(func() (Result, error) { return c.keyFramesOnce(ctx, gtFrames, out) })
}

// keyFramesOnce is one try of KeyFrames.
func (c *Cache) keyFramesOnce(ctx context.Context, gtFrames map[int]string, out string) (Result, error) {
	src, err := c.outputFrames(ctx, out)
	if err != nil {
		return Result{}, err
	}
	defer src.close()
	n := src.n
	want := map[int]string{} // frame index → GT file
	for key, path := range gtFrames {
		i := resolve(key, n)
		if i < 0 || i >= n {
			return Result{}, &MismatchError{GT: path, Out: out, What: fmt.Sprintf("frame count: ground truth is a key frame at %d, output has %d frames", i, n)}
		}
		if prev, ok := want[i]; ok && prev != path {
			return Result{}, fmt.Errorf("compare %s: ground truth %s and %s are both frame %d", out, prev, path, i)
		}
		want[i] = path
	}
	w, h := src.w, src.h
	buf := make([]byte, 3*w*h)
	res := Result{Kind: "video", Width: w, Height: h, Frames: n}
	var s metrics.SSIMScratch
	last := slices.Max(slices.Collect(maps.Keys(want)))
	for i := 0; i <= last; i++ {
		if err := src.next(buf); err != nil {
			if errors.Is(err, io.EOF) {
				err = &MismatchError{GT: want[last], Out: out, What: fmt.Sprintf("frame count: ground truth is a key frame at %d, output has %d frames", last, i)}
			}
			return Result{}, err
		}
		path, ok := want[i]
		if !ok {
			continue
		}
		gt, gw, gh, err := c.image(ctx, path)
		if err != nil {
			return Result{}, err
		}
		if err := checkSize(path, out, gw, gh, w, h); err != nil {
			return Result{}, err
		}
		var m metrics.FrameMetrics
		c.helpersOf().Tools.Nice().Run(func() { m = s.Metrics(buf, gt, w, h) })
		res.PerFrame = append(res.PerFrame, Frame{Index: i, SSIM: m.SSIM, PSNR: m.PSNR, MeanAbsDiff: m.MeanAbsDiff})
	}
	// To the end: the frames that decode must be as many as the container lists, and the
	// decode's proof of its conversion comes there.
	for {
		err := src.next(buf)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Result{}, err
		}
	}
	res.summarise()
	return res, nil
}

// frameSource hands on a video's frames as rgb24, from a reader or from frames Output kept; it
// is read to its end.
type frameSource struct {
	n, w, h int // n: the frame count (exact for kept frames, else the container's)
	next    func(dst []byte) error
	close   func()
}

// outputFrames returns out's frames for KeyFrames: the kept ones, else a reader, with the
// frame count the container lists, or counted by a first decode when it lists none.
func (c *Cache) outputFrames(ctx context.Context, out string) (frameSource, error) {
	if v := c.keptVideo(out); v != nil {
		i := 0
		return frameSource{n: len(v.frames), w: v.w, h: v.h, close: func() {}, next: func(dst []byte) error {
			if i >= len(v.frames) {
				return io.EOF
			}
			copy(dst, v.form.RGB(dst, v.frames[i]))
			i++
			return nil
		}}, nil
	}
	whole := c.helpersOf().decodeOptions()
	r, err := c.helpersOf().Tools.OpenFramesWith(ctx, out, whole)
	if err != nil {
		return frameSource{}, err
	}
	n := r.Listed()
	if n == 0 {
		// The container does not say: count the frames, then decode again from the start.
		// (A count whose proof fails ends with its error, and KeyFrames tries again.)
		n, err = countFrames(r)
		r.Close()
		if err != nil {
			return frameSource{}, err
		}
		if r, err = c.helpersOf().Tools.OpenFramesWith(ctx, out, whole); err != nil {
			return frameSource{}, err
		}
	}
	w, h := r.Size()
	return frameSource{n: n, w: w, h: h, next: r.Next, close: r.Close}, nil
}

// countFrames decodes the rest of r and returns the video's exact frame count.
func countFrames(r *media.FrameReader) (int, error) {
	buf := make([]byte, r.Format().Size())
	for {
		if err := r.NextRaw(buf); err != nil {
			if errors.Is(err, io.EOF) {
				return r.Frames(), nil
			}
			return 0, err
		}
	}
}

// FrameAt returns frame index (0-based) of a video as packed RGB, for pictures of a failure.
// (It would be called Frame, but that is the name of the per-frame metrics type.)
func FrameAt(ctx context.Context, video string, index int) (rgb []byte, w, h int, err error) {
	if index < 0 {
		return nil, 0, 0, fmt.Errorf("frame %d of %s: negative index", index, video)
	}
	r, err := media.OnPath().OpenFrames(ctx, video)
	if err != nil {
		return nil, 0, 0, err
	}
	defer r.Close()
	w, h = r.Size()
	buf := make([]byte, 3*w*h)
	for i := 0; i <= index; i++ {
		if err := r.Next(buf); err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("frame %d of %s: the video has %d frames", index, video, i)
			}
			return nil, 0, 0, err
		}
	}
	return buf, w, h, nil
}

// Files compares out with gt as images when out is a still image (PNG, JPEG or WebP, told by
// its first bytes) and as whole videos otherwise. An image against a video, either way round,
// is a *MismatchError. The ground truth is decoded once for all the comparisons of the cache
// (a nil cache keeps nothing).
func (c *Cache) Files(ctx context.Context, gt, out string) (Result, error) {
	gtStill, err := isStill(ctx, gt)
	if err != nil {
		return Result{}, err
	}
	outStill, err := isStill(ctx, out)
	if err != nil {
		return Result{}, err
	}
	kind := map[bool]string{true: "an image", false: "a video"}
	switch {
	case gtStill != outStill:
		// A file that is not a still image is a video only if it decodes as one; else it is
		// no media at all, which is "cannot decode", not a mismatch of kinds.
		notStill := gt
		if gtStill {
			notStill = out
		}
		if _, err := c.helpersOf().Tools.Probe(ctx, notStill); err != nil {
			return Result{}, fmt.Errorf("cannot decode %s as an image (PNG, JPEG, WebP) or a video: %w", notStill, err)
		}
		return Result{}, &MismatchError{GT: gt, Out: out, What: fmt.Sprintf("kind: ground truth is %s, output %s", kind[gtStill], kind[outStill])}
	case outStill:
		return c.Images(ctx, gt, out)
	}
	return c.Videos(ctx, gt, out)
}

// FilesEach compares each of outs with gt as Files does (result k and error k are those of
// Files(ctx, gt, outs[k])), the videos among them in one pass with a video ground truth
// (VideosEach).
func (c *Cache) FilesEach(ctx context.Context, gt string, outs []string) ([]Result, []error) {
	res, errs := make([]Result, len(outs)), make([]error, len(outs))
	gtStill, gerr := isStill(ctx, gt)
	var videos []string
	var at []int
	for k, out := range outs {
		if outStill, err := isStill(ctx, out); gerr == nil && err == nil && !gtStill && !outStill {
			videos, at = append(videos, out), append(at, k)
			continue
		}
		res[k], errs[k] = c.Files(ctx, gt, out)
	}
	if len(videos) > 0 {
		vr, ve := c.VideosEach(ctx, gt, videos)
		for i, k := range at {
			res[k], errs[k] = vr[i], ve[i]
		}
	}
	return res, errs
}

// isStill reports whether path starts like a PNG, JPEG or WebP file.
func isStill(ctx context.Context, path string) (bool, error) {
	f, err := inputfile.Open(ctx, path)
	if err != nil {
		return false, fmt.Errorf("compare %s: %w", path, err)
	}
	defer f.Close() //nolint:errcheck // opened read-only: nothing written to lose
	var head [12]byte
	n, err := io.ReadFull(f, head[:])
	if n == 0 {
		if errors.Is(err, io.EOF) {
			return false, fmt.Errorf("decode %s: empty file", path)
		}
		return false, fmt.Errorf("decode %s: %w", path, err)
	}
	b := head[:n]
	return bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) ||
		bytes.HasPrefix(b, []byte{0xff, 0xd8, 0xff}) ||
		(n == 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP"), nil
}
