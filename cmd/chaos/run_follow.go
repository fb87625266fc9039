package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"golang.org/x/term"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/crashwall/chaos/run"
)

// followRun shows the run's progress until it ends and returns its result. The first
// Ctrl-C (ctx done) asks the run to abort; cctx is what the client calls with, which
// outlives ctx so that the aborted run can still be followed to its folder.
func followRun(ctx, cctx context.Context, ios *IOStreams, c *conn, workflowID string, total int) (run.ExperimentResult, error) {
	done := make(chan error, 1)
	lost := make(chan error, 1)
	var res run.ExperimentResult
	go func() {
		// The run lives in the server, not in this process: while the server is away
		// (killed, restarting) the run is not over, and its result comes when it is back.
		for {
			err := c.Client.GetWorkflow(cctx, workflowID, "").Get(cctx, &res)
			if err == nil || !serverAway(err) || cctx.Err() != nil {
				done <- err
				return
			}
			select {
			case lost <- err:
			default:
			}
			select {
			case <-cctx.Done():
			case <-time.After(2 * time.Second):
			}
		}
	}()
	prog := newProgressPrinter(ios, total)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	interrupted, waiting := false, false
	sayWaiting := func(err error) {
		if !waiting {
			waiting = true
			prog.finish()
			fmt.Fprintf(ios.ErrOut, "waiting for the Temporal server to come back (%s); the run goes on there, and this follows it when it does\n", oneLine(err))
		}
	}
	for {
		select {
		case err := <-done:
			prog.finish()
			if err != nil {
				return res, unexpected(c, fmt.Errorf("the run failed: %w", err))
			}
			return res, nil
		case err := <-lost:
			sayWaiting(err)
		case <-ctx.Done():
			if !interrupted {
				interrupted = true
				fmt.Fprintln(ios.ErrOut, "\ninterrupted: aborting the run (stopping and tearing down running trials)...")
				_ = c.Client.SignalWorkflow(cctx, workflowID, "", run.SignalAbort, "interrupted by the user")
			}
		case <-tick.C:
			// A query to a server that is gone would wait for it for ever: each has its
			// own deadline, and a server away is said once.
			qctx, cancel := context.WithTimeout(cctx, 10*time.Second)
			v, err := c.Client.QueryWorkflow(qctx, workflowID, "", run.QueryProgress)
			cancel()
			if err != nil && serverAway(err) {
				sayWaiting(err)
			}
			if err == nil {
				if waiting {
					waiting = false
					fmt.Fprintln(ios.ErrOut, "the Temporal server is back; following the run")
				}
				var p run.Progress
				if v.Get(&p) == nil {
					prog.update(p)
				}
			}
		}
	}
}

// serverAway says err is the server not answering (down, restarting, or too slow), not
// the run's own failure.
func serverAway(err error) bool {
	var unavailable *serviceerror.Unavailable
	var deadline *serviceerror.DeadlineExceeded
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded:
		return true
	}
	return errors.As(err, &unavailable) || errors.As(err, &deadline) || errors.Is(err, context.DeadlineExceeded)
}

// oneLine is err's message on one line, shortened.
func oneLine(err error) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// progressPrinter shows progress: a bar redrawn in place on a terminal, a plain line per
// change otherwise (CI logs).
type progressPrinter struct {
	ios   *IOStreams
	total int
	tty   bool
	start time.Time
	last  string
}

func newProgressPrinter(ios *IOStreams, total int) *progressPrinter {
	tty := false
	w := ios.ErrOut
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok { // redacted (runRun)
		w = u.Unwrap()
	}
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	return &progressPrinter{ios: ios, total: total, tty: tty, start: time.Now()}
}

func (p *progressPrinter) update(pr run.Progress) {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(pr.ByOutcome)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, pr.ByOutcome[k]))
	}
	left := ""
	if pr.Done > 0 && pr.Done < pr.Total {
		per := time.Since(p.start) / time.Duration(pr.Done)
		left = fmt.Sprintf(", about %s left", (per * time.Duration(pr.Total-pr.Done)).Round(time.Second))
	}
	counts := fmt.Sprintf("%d/%d trials done, %d running", pr.Done, pr.Total, pr.Running)
	if len(parts) > 0 {
		counts += " (" + strings.Join(parts, ", ") + ")"
	}
	if p.tty {
		width := 24
		filled := 0
		if pr.Total > 0 {
			filled = width * pr.Done / pr.Total
		}
		fmt.Fprintf(p.ios.ErrOut, "\r\033[K[%s%s] %s%s", strings.Repeat("#", filled), strings.Repeat("-", width-filled), counts, left)
		return
	}
	if counts != p.last {
		fmt.Fprintln(p.ios.ErrOut, counts+left)
		p.last = counts
	}
}

func (p *progressPrinter) finish() {
	if p.tty {
		fmt.Fprintln(p.ios.ErrOut)
	}
}
