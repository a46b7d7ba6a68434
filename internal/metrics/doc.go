// Package metrics measures: SSIM, PSNR and mean absolute difference of RGB frames (equal to
// scikit-image's), and the audio metrics (mel-spectrogram similarity, waveform correlation,
// RMS level). Pure functions over samples, no I/O and no verdicts: thresholds and the checks
// they make are package checks'. The SSIM kernels come in three levels (portable, AVX2,
// AVX-512), chosen at run time by package kernel.
package metrics
