package worker

import "fmt"

// What one trial in flight takes of this machine's limits, besides what the worker and
// the embedded server hold anyway (reserveFDs, reserveTasks). A trial's descriptors in
// the worker: its hub's listener and sessions, the record, the agent's output (two pipes
// and two files), the wall's socket and its relay's connection, the process handle of
// its agent, and the agent's connections to the hub and the model proxy; its processes:
// the reaper, the agent's shell, the agent and its wall relay. tests/run TestRunAsWide
// checks the descriptors against a run of 32 at once.
const (
	fdsPerTrial   = 16
	tasksPerTrial = 4
	reserveFDs    = 1024
	reserveTasks  = 256
)

// Capacity is how many trials at once this machine can hold in one worker, and the limit
// that sets it (Limit is "" when nothing does).
type Capacity struct {
	Trials int
	Limit  string
}

// unlimited stands for a machine no limit bounds.
const unlimited = 1 << 30

// MachineCapacity reads the limits of this process (open files; processes of this user;
// the system's processes) against what a trial takes. Go raises the soft limit of open
// files to the hard one when it starts, so the hard one is what counts.
func MachineCapacity() Capacity {
	c := Capacity{Trials: unlimited}
	if limit, open, ok := fileLimit(); ok {
		if n := (limit - open - reserveFDs) / fdsPerTrial; n < c.Trials {
			c = Capacity{Trials: max(n, 0), Limit: fmt.Sprintf("its limit of open files (%d, ulimit -n) holds %d trials at once at %d descriptors a trial, with %d kept for the worker and the server", limit, max(n, 0), fdsPerTrial, reserveFDs)}
		}
	}
	if limit, used, what, ok := taskLimit(); ok {
		if n := (limit - used - reserveTasks) / tasksPerTrial; n < c.Trials {
			c = Capacity{Trials: max(n, 0), Limit: fmt.Sprintf("%s (%d, %d in use) holds %d trials at once at %d processes a trial", what, limit, used, max(n, 0), tasksPerTrial)}
		}
	}
	return c
}

// CapacityProblem says why this machine cannot hold trials at once in one worker, or "".
func CapacityProblem(trials int) string {
	c := MachineCapacity()
	if trials <= c.Trials {
		return ""
	}
	return fmt.Sprintf("this machine cannot hold %d trials at once: %s", trials, c.Limit)
}
