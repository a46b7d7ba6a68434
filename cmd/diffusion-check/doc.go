// Command diffusion-check runs diffusion-serving test suites against a real or built-in
// server and reports every request's verdict. See the README and docs/.
package main
