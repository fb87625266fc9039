package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// stopSignal is the cause of the root context's end when a signal stopped the command:
// unlike signal.NotifyContext's cause it keeps the signal, so a command that ends on
// ctx.Done can still exit 128+N (docs/cli.md) however its select falls.
type stopSignal struct{ sig os.Signal }

func (s stopSignal) Error() string { return s.sig.String() + " signal received" }

// Is makes the cause a context.Canceled, as signal.NotifyContext's is.
func (s stopSignal) Is(target error) bool { return target == context.Canceled }

// signalContext is cancelled, with a stopSignal as its cause, on the first SIGINT or
// SIGTERM; later ones are still caught until stop is called.
func signalContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-ch:
			cancel(stopSignal{s})
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(nil); signal.Stop(ch) }
}

// stoppedBy is the signal that ended ctx, if one did.
func stoppedBy(ctx context.Context) (syscall.Signal, bool) {
	s, ok := context.Cause(ctx).(stopSignal)
	if !ok {
		return 0, false
	}
	n, ok := s.sig.(syscall.Signal)
	return n, ok
}
