// Package media wraps ffprobe and ffmpeg: it says what a media file holds (Tools.Probe),
// decodes frames and audio (Tools.OpenFramesWith, Tools.DecodeAudio) and encodes the images
// and videos the reference server returns (EncodePNG, EncodeJPEG, Tools.EncodeWebP,
// Tools.EncodeVideo). The programs run are those of a Tools value (ProbeTools; OnPath for a
// caller that probed nothing), at its niceness.
//
// Every subprocess is started with exec.CommandContext in its own process group; cancelling
// the context sends SIGTERM to the group and, after WaitDelay, kills it, so no ffmpeg outlives
// its caller.
package media
