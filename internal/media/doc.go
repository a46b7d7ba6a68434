// Package media wraps ffprobe and ffmpeg: it says what a media file holds (Probe) and encodes
// the images and videos the reference server returns (EncodePNG, EncodeJPEG, EncodeWebP,
// EncodeVideo).
//
// Every subprocess is started with exec.CommandContext in its own process group; cancelling
// the context sends SIGTERM to the group and, after WaitDelay, kills it, so no ffmpeg outlives
// its caller.
package media
