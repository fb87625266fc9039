package workflows

import "go.temporal.io/sdk/workflow"

// waitAgentOrAbort waits for whichever comes first: the agent's activity ends (its result
// decoded into out, agentDone set), the trial's abort signal (its reason, "aborted" when
// it gives none) or the run's cancel ("the run was cancelled").
func waitAgentOrAbort(ctx workflow.Context, signal string, agentFut workflow.Future, out any) (abortReason string, agentDone bool, agentErr error) {
	abortCh := workflow.GetSignalChannel(ctx, signal)
	sel := workflow.NewSelector(ctx)
	sel.AddFuture(agentFut, func(f workflow.Future) {
		agentDone = true
		agentErr = f.Get(ctx, out)
	})
	sel.AddReceive(abortCh, func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, &abortReason)
		if abortReason == "" {
			abortReason = "aborted"
		}
	})
	sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {
		abortReason = "the run was cancelled"
	})
	for !agentDone && abortReason == "" {
		sel.Select(ctx)
	}
	return abortReason, agentDone, agentErr
}
