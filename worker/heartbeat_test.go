package worker

import (
	"context"
	"errors"
	"testing"

	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestLateHeartbeatIsNotLost(t *testing.T) {
	heartbeat := workflowservice.WorkflowService_RecordActivityTaskHeartbeat_FullMethodName
	other := workflowservice.WorkflowService_RespondActivityTaskCompleted_FullMethodName
	tests := []struct {
		name    string
		method  string
		err     error
		wantErr codes.Code // codes.OK: no error
	}{
		{"heartbeat answered", heartbeat, nil, codes.OK},
		{"heartbeat past its deadline", heartbeat, status.Error(codes.DeadlineExceeded, "context deadline exceeded"), codes.OK},
		{"heartbeat with the server down", heartbeat, status.Error(codes.Unavailable, "connection refused"), codes.OK},
		{"heartbeat to a busy workflow", heartbeat, status.Error(codes.ResourceExhausted, "workflow is busy"), codes.OK},
		{"heartbeat with the server aborting", heartbeat, status.Error(codes.Aborted, "shard moved"), codes.OK},
		{"heartbeat with a server error", heartbeat, status.Error(codes.Internal, "persistence"), codes.OK},
		{"heartbeat of an activity that is gone", heartbeat, status.Error(codes.NotFound, "workflow execution already completed"), codes.NotFound},
		{"heartbeat cancelled by its caller", heartbeat, status.Error(codes.Canceled, "context canceled"), codes.Canceled},
		{"another RPC past its deadline", other, status.Error(codes.DeadlineExceeded, "context deadline exceeded"), codes.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			called := false
			invoker := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
				called = true
				return tt.err
			}
			reply := &workflowservice.RecordActivityTaskHeartbeatResponse{}
			err := lateHeartbeatIsNotLost(context.Background(), tt.method, nil, reply, nil, invoker)
			if !called {
				t.Fatal("the RPC was not made")
			}
			if got := status.Code(err); got != tt.wantErr {
				t.Fatalf("error %v (code %s), want code %s", err, got, tt.wantErr)
			}
			if tt.wantErr != codes.OK && !errors.Is(err, tt.err) && err.Error() != tt.err.Error() {
				t.Errorf("error %v, want the RPC's own %v", err, tt.err)
			}
			if reply.GetCancelRequested() {
				t.Error("a late heartbeat reads as a cancel request")
			}
		})
	}
}
