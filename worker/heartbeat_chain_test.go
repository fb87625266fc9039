package worker

import (
	"context"
	"net"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// slowHeartbeats answers heartbeats only after the caller's deadline.
type slowHeartbeats struct {
	workflowservice.UnimplementedWorkflowServiceServer
}

func (slowHeartbeats) RecordActivityTaskHeartbeat(ctx context.Context, _ *workflowservice.RecordActivityTaskHeartbeatRequest) (*workflowservice.RecordActivityTaskHeartbeatResponse, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// stubFrontend serves srv as the Temporal frontend on a port of 127.0.0.1 until the test
// ends, and returns its address.
func stubFrontend(t *testing.T, srv workflowservice.WorkflowServiceServer) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer()
	workflowservice.RegisterWorkflowServiceServer(g, srv)
	go g.Serve(l)
	t.Cleanup(g.Stop)
	return l.Addr().String()
}

// heartbeatWithAndWithout makes a heartbeat through a client of addr made with
// ClientOptions, which must return no error, and through one made without, which must
// return one: the interceptor is what makes the difference.
func heartbeatWithAndWithout(t *testing.T, addr, what string, heartbeat func(context.Context, client.Client) error) {
	t.Helper()
	for _, tt := range []struct {
		name    string
		opts    func(client.Options) client.Options
		wantErr bool
	}{
		{"with ClientOptions", ClientOptions, false},
		{"without", func(o client.Options) client.Options { return o }, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := client.NewLazyClient(tt.opts(client.Options{HostPort: addr}))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			err = heartbeat(ctx, c)
			t.Logf("%s: %v", tt.name, err)
			if (err != nil) != tt.wantErr {
				t.Errorf("%s: error %v, want an error: %v", what, err, tt.wantErr)
			}
		})
	}
}

// TestClientOptionsReachTheHeartbeat checks the interceptor sits in the SDK client's own
// chain: a heartbeat RPC that runs out of its deadline against a real gRPC server comes
// back as no error through a client made with ClientOptions, and as an error without.
func TestClientOptionsReachTheHeartbeat(t *testing.T) {
	addr := stubFrontend(t, slowHeartbeats{})
	heartbeatWithAndWithout(t, addr, "heartbeat past its deadline", func(ctx context.Context, c client.Client) error {
		_, err := c.WorkflowService().RecordActivityTaskHeartbeat(ctx, &workflowservice.RecordActivityTaskHeartbeatRequest{TaskToken: []byte("t")})
		return err
	})
}

// busyHeartbeats answers every heartbeat as a busy server does (the workflow's lock
// held, a rate limit): an error the SDK retries.
type busyHeartbeats struct {
	workflowservice.UnimplementedWorkflowServiceServer
	code codes.Code
}

func (b busyHeartbeats) RecordActivityTaskHeartbeat(context.Context, *workflowservice.RecordActivityTaskHeartbeatRequest) (*workflowservice.RecordActivityTaskHeartbeatResponse, error) {
	return nil, status.Error(b.code, "busy")
}

// TestBusyServerHeartbeat is the SDK's own heartbeat path (client.RecordActivityHeartbeat
// makes the RPC as a running activity's heartbeat does, with the SDK's retries) against
// a server that answers "try again": the retries back off until the RPC's deadline (the
// 1 s throttle interval) runs out inside the SDK's retry interceptor, and the error it
// returns, "context deadline exceeded", made the SDK cancel the running agent. Through
// ClientOptions it is no error.
func TestBusyServerHeartbeat(t *testing.T) {
	for _, code := range []codes.Code{codes.ResourceExhausted, codes.Aborted, codes.Unknown, codes.Internal} {
		t.Run(code.String(), func(t *testing.T) {
			addr := stubFrontend(t, busyHeartbeats{code: code})
			heartbeatWithAndWithout(t, addr, "heartbeat to a busy server", func(ctx context.Context, c client.Client) error {
				return c.RecordActivityHeartbeat(ctx, []byte("t"))
			})
		})
	}
}
