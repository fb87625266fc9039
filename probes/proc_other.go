//go:build !unix

package probes

import "os/exec"

// killGroupOnCancel keeps exec's default (kill the process) where there are no
// process groups.
func killGroupOnCancel(cmd *exec.Cmd) {}
