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
// server answers late is not a lost activity.
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
	o.ConnectionOptions.DialOptions = append(o.ConnectionOptions.DialOptions, grpc.WithChainUnaryInterceptor(lateHeartbeatIsNotLost))
	return o
}

// lateHeartbeatIsNotLost answers a heartbeat RPC that timed out or found no server as if
// the server had answered "carry on", so that the SDK does not cancel the activity.
// Every other RPC and error (NotFound: the activity is gone; a cancel request) passes.
func lateHeartbeatIsNotLost(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	if err == nil || method != workflowservice.WorkflowService_RecordActivityTaskHeartbeat_FullMethodName {
		return err
	}
	switch status.Code(err) {
	case codes.DeadlineExceeded, codes.Unavailable:
		return nil // reply is left empty: no cancel requested
	}
	return err
}
