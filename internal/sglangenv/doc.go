// Package sglangenv holds how SGLang reads the environment variables that diffusion-check sets
// for it or reproduces, so that the runner (which sets them) and the reference server (which
// reads them as SGLang does) share one definition.
package sglangenv
