package trial

import (
	"os"
	"syscall"

	"github.com/crashwall/chaos/proxies/stdio"
	"github.com/crashwall/chaos/reap"
)

// reaping says whether RunAgent starts the agent under a reaper (package reap): only
// Linux has child subreapers and parent-death signals.
const reaping = reap.Supported

// killAll asks the reaper (pid) to kill everything under it.
func killAll(reaper int) { syscall.Kill(reaper, reap.KillAll) }

// reaperAttr starts the reaper as the leader of the agent's process group.
func reaperAttr() *syscall.SysProcAttr {
	if !reaping {
		return groupAttr()
	}
	return reap.Attr()
}

// ExecutableIsChaos is set by the chaos command's main: this executable is chaos and has
// its hidden `reap` command. (A test binary is not, and must never be run as one.)
var ExecutableIsChaos bool

// reaper is the command line that runs an agent under a reaper, before the agent's own
// (`-- sh -c COMMAND`): the relay next to the chaos binary (`chaos-relay reap`: a small
// static binary, where chaos is a large one, Temporal inside, that each trial would load
// and initialize), else `chaos reap` (ChaosBin when set, which is chaos by contract since
// {wall} runs it, else this executable when it is chaos); nil when there is none or the
// system has no child subreapers.
func (h *Host) reaper() []string {
	if !reaping {
		return nil
	}
	bin := h.ChaosBin
	if bin == "" && ExecutableIsChaos {
		bin, _ = os.Executable()
	}
	if bin == "" {
		return nil
	}
	if relay := stdio.FindRelay(bin); relay != "" {
		return []string{relay, "reap"}
	}
	return []string{bin, "reap"}
}
