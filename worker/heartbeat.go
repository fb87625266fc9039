package worker

import (
	"context"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ClientOptions are o with what a chaos worker's client needs: a heartbeat that the
// server answers late is not a lost activity, and no secret value known reaches the
// server (redactRequests).
//
// Why: the Go SDK (v1.50.0, internalHeartBeat) gives each heartbeat RPC a deadline of the
// heartbeat throttle interval (at least 1 s), and when the RPC fails with a retryable
// error (a deadline, an unreachable server) it cancels the activity, on the theory that
// the heartbeat timeout has passed. With the 1 s throttle the worker needs (NewWorker),
// a server slow for one second (a starved machine, a server restarting) cancelled
// running agents, and a trial failed that nothing was wrong with. The server alone knows
// when the heartbeat timeout has passed: it times the activity out and the trial is run
// again (workflows: worker_lost); until then a late heartbeat is only late.
func ClientOptions(o client.Options) client.Options {
	o.ConnectionOptions.DialOptions = append(o.ConnectionOptions.DialOptions, grpc.WithChainUnaryInterceptor(redactRequests, lateHeartbeatIsNotLost))
	return o
}

// lateHeartbeatIsNotLost answers a heartbeat RPC that timed out, found no server, or
// found it busy as if the server had answered "carry on", so that the SDK does not
// cancel the activity. Every other RPC and error (NotFound: the activity is gone; a
// cancel request) passes.
//
// Busy counts as much as late. This interceptor sits inside the SDK's retry interceptor
// (the SDK chains its own first). A busy server answers ResourceExhausted (the
// workflow's lock is held: the trial's two activities heartbeat the same workflow),
// Aborted, Internal or Unknown, which the SDK retries with backoff; the backoff
// outlives the heartbeat's 1 s deadline, and the retry interceptor then returns
// "context deadline exceeded" itself, past this one. That was the unexplained cancel
// seen at load 35 (2 trials in ~200, cause "context deadline exceeded"):
// TestBusyServerHeartbeat shows it. Answered here, the retry never starts.
func lateHeartbeatIsNotLost(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	if err == nil || method != workflowservice.WorkflowService_RecordActivityTaskHeartbeat_FullMethodName {
		return err
	}
	switch status.Code(err) {
	case codes.DeadlineExceeded, codes.Unavailable, // late, or no server
		codes.ResourceExhausted, codes.Aborted, codes.Internal, codes.Unknown: // busy: what the SDK retries
		return nil // reply is left empty: no cancel requested
	}
	return err
}
