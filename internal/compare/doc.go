// Package compare measures how far an output image or video is from its ground truth: it
// decodes both sides through ffmpeg (concurrently, frame by frame; a whole video is held in
// memory only by a Cache, up to its cap, to compare several outputs with one ground truth)
// and computes SSIM, PSNR and mean absolute difference on every frame with the kernels of
// package metrics. It measures; thresholds and verdicts are the caller's.
package compare
