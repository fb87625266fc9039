//go:build unix

package main

import (
	"io"
	"net"
	"os"
	"syscall"
)

// handOver offers the relay's stdin and stdout to the hub on conn (handshake, with the
// two descriptors as SCM_RIGHTS) and reads its one-byte answer. When the hub takes them
// ('y'), the agent talks to the hub directly and the relay lets go of its own copies
// (/dev/null in their place), so the agent sees its stdout end when the hub closes it.
// When it does not ('n', a socket that drops the descriptors), the relay copies bytes on
// conn as it did before there was a handover.
func handOver(conn *net.UnixConn, in io.Reader, out io.Writer) handOff {
	stdin, ok := in.(*os.File)
	stdout, ok2 := out.(*os.File)
	if !ok || !ok2 {
		return notHanded // not a process's stdio (a test's pipe): nothing to hand over
	}
	fdIn, fdOut := int(stdin.Fd()), int(stdout.Fd())
	if _, _, err := conn.WriteMsgUnix([]byte(handshake), syscall.UnixRights(fdIn, fdOut), nil); err != nil {
		// Nothing was sent (a descriptor the kernel would not pass): the hub reads the
		// connection as the byte stream it was before the handover.
		return notHanded
	}
	var answer [1]byte
	if _, err := io.ReadFull(conn, answer[:]); err != nil {
		return hubGone
	}
	switch answer[0] {
	case 'y':
		if null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0); err == nil {
			dup2(int(null.Fd()), fdIn)
			dup2(int(null.Fd()), fdOut)
			null.Close()
		}
		return handed
	case 'n':
		return notHanded
	}
	// A hub from before the handover read the handshake as a line that is not JSON and
	// answered it with one JSON-RPC error line: skip it, then copy.
	for answer[0] != '\n' {
		if _, err := io.ReadFull(conn, answer[:]); err != nil {
			return hubGone
		}
	}
	return notHanded
}
