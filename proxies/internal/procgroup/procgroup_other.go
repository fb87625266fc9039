//go:build !unix

// Package procgroup starts a program the wall runs (a stdio server, a script's adapter) in a
// process group of its own and ends that group, so that whatever the program started ends
// with it.
package procgroup

import "os/exec"

// Own does nothing where there are no process groups.
func Own(*exec.Cmd) {}

// Kill ends cmd's process.
func Kill(cmd *exec.Cmd) {
	if cmd != nil && cmd.Process != nil {
		cmd.Process.Kill()
	}
}
