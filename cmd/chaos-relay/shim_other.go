//go:build !unix

package main

import (
	"fmt"
	"io"
)

// shim: the shim's launchers are sh scripts on unix systems only.
func shim(_ []string, _, stderr io.Writer) int {
	fmt.Fprintln(stderr, "chaos shim: the script shim runs on unix systems only; nothing was run")
	return 1
}
