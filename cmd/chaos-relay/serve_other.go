//go:build !unix

package main

import (
	"fmt"
	"io"
)

const serveUsage = "usage: chaos-relay serve ... (unix only)"

func serve(args []string, errOut io.Writer) int {
	fmt.Fprintln(errOut, "chaos-relay serve: only on Linux and other unix systems (it is the first process of an agent's container)")
	return 1
}
