// Package clip runs the external CLIP scorer of the consistency.clip check: diffusion-check
// carries no model, so a command given by the user scores image pairs. It measures; the verdict
// is checks.CLIP's.
package clip
