package worker

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/crashwall/chaos/run"
)

// A run learns the slots of the workers that will take its trials before it starts, from
// Temporal: each worker polls the run's trial queue (run.TrialTaskQueue) with an identity
// that carries its --max-trials (TrialIdentity), and the run reads the queue's pollers
// (QueueSlots). A worker that stopped is dropped from the list at once; one that was
// killed stays in it for the server's poller history (five minutes by default).

// TrialIdentity is the Temporal identity of a worker's poller of the trial queue: the
// SDK's own (pid@host) and the trials it holds at once.
func TrialIdentity(maxTrials int) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%d@%s chaos trials=%d", os.Getpid(), host, maxTrials)
}

var trialsInIdentity = regexp.MustCompile(` chaos trials=(\d+)$`)

// TrialSlots reads the trials a worker holds from its identity (TrialIdentity); false for
// a poller that is not a chaos worker's, or one from before identities carried them.
func TrialSlots(identity string) (int, bool) {
	m := trialsInIdentity.FindStringSubmatch(identity)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

// Poller is a worker that polls a run's trial queue, and the trials it holds at once (0:
// not known).
type Poller struct {
	Identity string
	Slots    int
}

// Name is the worker as a message names it: its identity without the slots.
func (p Poller) Name() string { return trialsInIdentity.ReplaceAllString(p.Identity, "") }

// queuePartitions is how many partitions Temporal gives a task queue by default
// (matching.numTaskqueueReadPartitions). A poll goes to any of them, and each knows only
// its own pollers: the queue's are the union of theirs.
const queuePartitions = 4

// QueueSlots lists the workers that poll the trial queue of queue (a run's task queue),
// each with its slots, sorted by identity.
func QueueSlots(ctx context.Context, c client.Client, queue string) ([]Poller, error) {
	name := run.TrialTaskQueue(queue)
	seen := map[string]bool{}
	var out []Poller
	for i := range queuePartitions {
		part := name
		if i > 0 {
			part = fmt.Sprintf("/_sys/%s/%d", name, i)
		}
		resp, err := c.DescribeTaskQueue(ctx, part, enumspb.TASK_QUEUE_TYPE_ACTIVITY)
		if err != nil {
			return nil, fmt.Errorf("read the workers of task queue %s: %w", name, err)
		}
		for _, p := range resp.GetPollers() {
			id := p.GetIdentity()
			if seen[id] {
				continue
			}
			seen[id] = true
			n, _ := TrialSlots(id)
			out = append(out, Poller{Identity: id, Slots: n})
		}
	}
	slices.SortFunc(out, func(a, b Poller) int { return strings.Compare(a.Identity, b.Identity) })
	return out, nil
}

// SlotsProblem says why the workers listed cannot hold concurrency trials at once of a
// run on queue, or "" when they can.
func SlotsProblem(pollers []Poller, concurrency int, queue string) string {
	total := 0
	var named []string
	for _, p := range pollers {
		total += p.Slots
		if p.Slots > 0 {
			named = append(named, fmt.Sprintf("%s: %d", p.Name(), p.Slots))
		} else {
			named = append(named, p.Name()+": slots not known")
		}
	}
	if concurrency <= total {
		return ""
	}
	if len(pollers) == 0 {
		return fmt.Sprintf("no worker takes the trials of task queue %s: start one (chaos worker --temporal ADDR --max-trials N), or leave out --temporal to run with a worker of its own", queue)
	}
	return fmt.Sprintf("concurrency %d is more than the workers of task queue %s hold: %d trials at once (%s); start more workers, give them a larger --max-trials, or lower --concurrency",
		concurrency, queue, total, strings.Join(named, ", "))
}
