package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/crashwall/chaos/faults"
)

// TestWallStopSignalOnContext: SIGINT reaches both the wall's own signal channel and
// the root context (signalContext); when the wall sees the context end first it must
// still exit 128+N and name the signal in the record, as when it sees the signal
// first (CI once saw exit 0: TestHostileWallHTTP). Both of the wall's waits are tried:
// stdin open, and stdin closed with --listen.
func TestWallStopSignalOnContext(t *testing.T) {
	for _, stdinClosed := range []bool{false, true} {
		t.Run(fmt.Sprintf("stdin closed %v", stdinClosed), func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			path := t.TempDir() + "/record.jsonl"
			w := startWall(t, ctx, &WallOptions{Spec: exampleSpec, Condition: faults.CleanID, Record: path, Listen: "127.0.0.1:0"})
			if line, err := w.stderr.ReadString('\n'); err != nil || !listenLine.MatchString(line) {
				t.Fatalf("stderr %q (%v)", line, err)
			}
			cs := w.connect(t)
			call(t, cs, "read_email", nil)
			if stdinClosed {
				cs.Close()
				if line, err := w.stderr.ReadString('\n'); err != nil || !strings.Contains(line, "still serving HTTP") {
					t.Fatalf("after stdin closed, stderr %q (%v)", line, err)
				}
			}
			go io.Copy(io.Discard, w.stderr) // the wall's last words
			cancel(stopSignal{syscall.SIGINT})
			err := w.wait(t)
			if code := ExitCode(err); code != 130 {
				t.Errorf("exit %d (%v) when the root context was stopped by SIGINT, want 130", code, err)
			}
			if _, end := lastRow(t, path); end.Reason != "signal: interrupt" {
				t.Errorf("session end reason %q, want %q", end.Reason, "signal: interrupt")
			}
		})
	}
}

// TestSignalContext: the root context's cause keeps the signal that stopped it.
func TestSignalContext(t *testing.T) {
	ctx, stop := signalContext(context.Background())
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-ctx.Done()
	if sig, ok := stoppedBy(ctx); !ok || sig != syscall.SIGTERM {
		t.Errorf("stoppedBy = %v, %v; want SIGTERM", sig, ok)
	}
	if !errors.Is(context.Cause(ctx), context.Canceled) {
		t.Errorf("cause %v is not a context.Canceled", context.Cause(ctx))
	}
	plain, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok := stoppedBy(plain); ok {
		t.Error("a plain cancel reads as a signal")
	}
}
