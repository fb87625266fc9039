package main

import (
	"context"
	"errors"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/crashwall/chaos/workflows"
)

func schedulePause(ctx context.Context, opts *ScheduleOptions) error {
	return scheduleDo(ctx, opts, "paused: no run starts until chaos schedule unpause "+opts.Name, func(h client.ScheduleHandle) error {
		return h.Pause(ctx, client.SchedulePauseOptions{Note: orDefault(opts.Note, "paused with chaos schedule pause")})
	})
}

func scheduleUnpause(ctx context.Context, opts *ScheduleOptions) error {
	return scheduleDo(ctx, opts, "unpaused", func(h client.ScheduleHandle) error {
		return h.Unpause(ctx, client.ScheduleUnpauseOptions{Note: orDefault(opts.Note, "unpaused with chaos schedule unpause")})
	})
}

func scheduleTrigger(ctx context.Context, opts *ScheduleOptions) error {
	// Buffer one: a run asked for by hand starts now, or right after the run in progress.
	return scheduleDo(ctx, opts, "triggered: a run starts now, or when the run in progress ends", func(h client.ScheduleHandle) error {
		return h.Trigger(ctx, client.ScheduleTriggerOptions{Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ONE})
	})
}

func scheduleDelete(ctx context.Context, opts *ScheduleOptions) error {
	return scheduleDo(ctx, opts, "deleted (a run in progress finishes; its folder and results stay)", func(h client.ScheduleHandle) error {
		return h.Delete(ctx)
	})
}

func scheduleDo(ctx context.Context, opts *ScheduleOptions, done string, f func(client.ScheduleHandle) error) error {
	c, h, err := scheduleHandle(ctx, opts)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := f(h); err != nil {
		return scheduleErr(c, opts.Name, err)
	}
	fmt.Fprintf(opts.IO.Out, "schedule %s %s\n", opts.Name, done)
	return nil
}

func scheduleHandle(ctx context.Context, opts *ScheduleOptions) (*conn, client.ScheduleHandle, error) {
	if err := checkScheduleName(opts.Name); err != nil {
		return nil, nil, err
	}
	c, err := connect(ctx, opts.Temporal, false, "schedule")
	if err != nil {
		return nil, nil, err
	}
	return c, c.Client.ScheduleClient().GetHandle(ctx, workflows.ScheduleID(opts.Name)), nil
}

func scheduleErr(c *conn, name string, err error) error {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return badInput(fmt.Errorf("no schedule %s (chaos schedule list shows them)", name))
	}
	return unexpected(c, fmt.Errorf("schedule %s: %w", name, err))
}
