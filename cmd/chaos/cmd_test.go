package main

import (
	"bytes"
	"strings"
	"testing"
)

// chaosCmd runs the chaos command line args in this process, with an empty stdin, and
// returns what it wrote (stdout and stderr together) and its error.
func chaosCmd(t testing.TB, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	root := NewCmdRoot(&IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}
