// Package clock waits on the wall clock the one way every waiting loop of diffusion-check
// should: for a duration, or until its context ends, whichever comes first.
package clock
