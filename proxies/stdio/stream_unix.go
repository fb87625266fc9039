//go:build unix

package stdio

import (
	"io"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// maxFDs is how many descriptors the first message's buffer takes. The relay sends two;
// more, or a buffer the kernel had to cut (MSG_CTRUNC: it closed those that did not fit),
// is refused, and every one received is closed.
const maxFDs = 8

// readFirst reads conn's first message: its bytes and the descriptors that came with
// them (SCM_RIGHTS; the runtime receives them close-on-exec, so no agent the worker
// starts inherits one). The caller owns the descriptors, a nil error or not.
func readFirst(conn *net.UnixConn) ([]byte, []int, error) {
	buf := make([]byte, 4<<10)
	oob := make([]byte, syscall.CmsgSpace(maxFDs*4))
	n, oobn, flags, _, err := conn.ReadMsgUnix(buf, oob)
	var fds []int
	if oobn > 0 {
		msgs, perr := syscall.ParseSocketControlMessage(oob[:oobn])
		for _, m := range msgs {
			if got, rerr := syscall.ParseUnixRights(&m); rerr == nil {
				fds = append(fds, got...)
			}
		}
		if perr != nil || flags&syscall.MSG_CTRUNC != 0 {
			// Descriptors the kernel could not pass whole: none is taken.
			fds = append(fds, -1)
		}
	}
	if err == nil && n == 0 && oobn == 0 {
		err = io.EOF
	}
	return buf[:n], fds, err
}

// takeStdio returns the relay's stdin and stdout from fds, both pipes or sockets that
// read and write as stdin and stdout do, as files the runtime polls (so that the guard's
// Close ends a read, as it does on a socket). ok false: fds are not that, and all of them
// are closed; a terminal or a regular file is never served.
func takeStdio(fds []int) (stdin, stdout *os.File, ok bool) {
	if len(fds) != 2 || !isStream(fds[0], unix.O_RDONLY) || !isStream(fds[1], unix.O_WRONLY) {
		closeFDs(fds)
		return nil, nil, false
	}
	// Non-blocking before NewFile, which then has the runtime poll them (as mcpwall's
	// makePollable does for a wall's own stdin). The mode is the pipe's open file's,
	// shared with the relay, which no longer reads or writes it.
	for _, fd := range fds {
		if err := syscall.SetNonblock(fd, true); err != nil {
			closeFDs(fds)
			return nil, nil, false
		}
	}
	return os.NewFile(uintptr(fds[0]), "relay-stdin"), os.NewFile(uintptr(fds[1]), "relay-stdout"), true
}

// isStream says fd is a pipe or a socket open for access (O_RDONLY: reading, O_WRONLY:
// writing), or both.
func isStream(fd, access int) bool {
	var st syscall.Stat_t
	if fd < 0 || syscall.Fstat(fd, &st) != nil {
		return false
	}
	if t := st.Mode & syscall.S_IFMT; t != syscall.S_IFIFO && t != syscall.S_IFSOCK {
		return false
	}
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return false
	}
	mode := fl & unix.O_ACCMODE
	return mode == access || mode == unix.O_RDWR
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		if fd >= 0 {
			syscall.Close(fd)
		}
	}
}
