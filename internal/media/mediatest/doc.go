// Package mediatest holds test helpers shared by the packages that run ffmpeg.
package mediatest
