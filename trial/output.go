package trial

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/crashwall/chaos/redact"
	"github.com/crashwall/chaos/run"
)

// OutputCap is how much of each of the agent's streams (stdout, stderr) a trial keeps: the
// last OutputCap bytes. An agent that writes without end costs at most twice this on disk
// while it runs, and this once it has ended; result.json says how much was dropped.
const OutputCap = 8 << 20

// tailFile keeps the last limit bytes written to it in a file. It writes through, so the
// file can be read while the agent runs; when the file reaches twice the limit, its last
// limit bytes are moved to the front and the rest cut off (each byte is moved at most
// once, on average).
type tailFile struct {
	f     *os.File
	limit int64
	size  int64 // bytes in the file
	total int64 // bytes written
}

func (t *tailFile) Write(p []byte) (int, error) {
	n, err := t.f.Write(p)
	t.size += int64(n)
	t.total += int64(n)
	if err != nil {
		return n, err
	}
	if t.size >= 2*t.limit {
		if err := t.keepTail(); err != nil {
			return n, err
		}
	}
	return n, nil
}

// keepTail cuts the file down to its last limit bytes.
func (t *tailFile) keepTail() error {
	if t.size <= t.limit {
		return nil
	}
	buf := make([]byte, t.limit)
	if _, err := t.f.ReadAt(buf, t.size-t.limit); err != nil {
		return fmt.Errorf("keep the tail of %s: %w", t.f.Name(), err)
	}
	if _, err := t.f.WriteAt(buf, 0); err != nil {
		return fmt.Errorf("keep the tail of %s: %w", t.f.Name(), err)
	}
	if err := t.f.Truncate(t.limit); err != nil {
		return fmt.Errorf("keep the tail of %s: %w", t.f.Name(), err)
	}
	if _, err := t.f.Seek(t.limit, io.SeekStart); err != nil {
		return err
	}
	t.size = t.limit
	return nil
}

// dropped is how many bytes were written and not kept.
func (t *tailFile) dropped() int64 { return t.total - t.size }

// capturedStream is one of the agent's streams: a pipe whose write end the agent gets,
// copied into a tailFile.
type capturedStream struct {
	w    *os.File // the agent's end; closed once the agent has started
	r    *os.File
	tail *tailFile
	done chan struct{} // closed when the copy has ended
	err  error
}

// captureTo creates path and a pipe into it that keeps the last limit bytes. A pipe,
// not the file itself, since the file's size could not be bounded otherwise; the agent
// gets the pipe's *os.File, so Wait still returns when the shell exits.
func captureTo(path string, limit int64) (*capturedStream, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &capturedStream{w: w, r: r, tail: &tailFile{f: f, limit: limit}, done: make(chan struct{})}, nil
}

// copyBuffer is the size of a stream's copy buffer.
const copyBuffer = 4 << 10

func (c *capturedStream) start() {
	go func() {
		defer close(c.done)
		// Every secret value known is redacted as the agent writes it (it may echo its
		// environment, or a browser server its fills): the file never holds one.
		w := redact.Known.NewWriter(c.tail)
		// A small buffer of its own, held while the agent is silent (an os.File's WriteTo
		// would take 32 KiB a stream): a pipe gives what it has, a few KiB a read.
		_, err := io.CopyBuffer(w, struct{ io.Reader }{c.r}, make([]byte, copyBuffer))
		if errors.Is(err, os.ErrClosed) {
			err = nil // finish gave up on a writer that outlived the agent
		}
		if ferr := w.Flush(); err == nil {
			err = ferr
		}
		c.err = err
	}()
}

// finish waits for the copy to end (every writer gone), at most wait, then cuts the file
// to its limit and closes it. A process that still holds the pipe after wait (one that
// escaped the agent's group where there is no reaper) writes to a closed pipe.
func (c *capturedStream) finish(wait time.Duration) (dropped int64, err error) {
	c.w.Close()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-c.done:
	case <-timer.C:
		c.r.Close()
		<-c.done
	}
	c.r.Close()
	err = c.err
	if kerr := c.tail.keepTail(); err == nil {
		err = kerr
	}
	if cerr := c.tail.f.Close(); err == nil {
		err = cerr
	}
	return c.tail.dropped(), err
}

// outputResult is what AgentResult says of the streams: nil when nothing was dropped.
func outputResult(limit, stdoutDropped, stderrDropped int64) *run.AgentOutput {
	if stdoutDropped == 0 && stderrDropped == 0 {
		return nil
	}
	return &run.AgentOutput{Cap: limit, StdoutDropped: stdoutDropped, StderrDropped: stderrDropped}
}
