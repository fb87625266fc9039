package worker

import (
	"context"
	"time"

	"github.com/crashwall/chaos/activities"
)

// removeOrphanContainers connects the worker to the Docker engine once as it starts,
// which removes the agent containers of this host's workers that were killed (their
// trials are over: a trial's hub dies with its worker). Most of those end by themselves
// within a second, when their relay finds the hub gone; this removes the ones that did
// not (a frozen container, an engine that was down). No engine answering is not an
// error here: the worker may never run a docker trial.
func removeOrphanContainers(acts *activities.Activities) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = activities.ConnectDocker(ctx, acts)
}

// removeStaleSockets removes the wall-* socket folders of workers that were killed
// (activities.RemoveStaleSockets).
func removeStaleSockets(acts *activities.Activities) { activities.RemoveStaleSockets(acts) }
