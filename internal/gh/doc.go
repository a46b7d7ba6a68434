// Package gh is diffusion-check's one home for GitHub: the workflow's environment read once
// into an Env, the rules that decide what an event may be trusted with (beside it), one API
// client with one retrying transport, and every API call diffusion-check makes (comments,
// commit statuses, the files and pull requests of a commit, check runs, and the pictures
// branch). Rendering what is posted is report's; wiring is cmd's. Nothing here reads the
// process environment: cmd passes its lookup function to ReadEnv.
package gh
