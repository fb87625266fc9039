// Package run holds the tests of `chaos run` as a user runs it: the chaos binary, built
// once, against the embedded Temporal server and against `chaos server` with separate
// `chaos worker`s, checked through the run folder, the web UI, the process table and the
// recorded workflow histories. It has no code of its own.
package run
