// Package pictures draws what a consistency failure looks like: the ground-truth frame, the
// output frame and their SSIM map side by side, with the metric values written above them, and
// an index.html that shows the pictures of every failing request of a run.
package pictures
