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

// TestClientOptionsReachTheHeartbeat checks the interceptor sits in the SDK client's own
// chain: a heartbeat RPC that runs out of its deadline against a real gRPC server comes
// back as no error through a client made with ClientOptions, and as an error without.
func TestClientOptionsReachTheHeartbeat(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	workflowservice.RegisterWorkflowServiceServer(srv, slowHeartbeats{})
	go srv.Serve(l)
	t.Cleanup(srv.Stop)

	for _, tt := range []struct {
		name    string
		opts    func(client.Options) client.Options
		wantErr bool
	}{
		{"with ClientOptions", ClientOptions, false},
		{"without", func(o client.Options) client.Options { return o }, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := client.NewLazyClient(tt.opts(client.Options{HostPort: l.Addr().String()}))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_, err = c.WorkflowService().RecordActivityTaskHeartbeat(ctx, &workflowservice.RecordActivityTaskHeartbeatRequest{TaskToken: []byte("t")})
			if (err != nil) != tt.wantErr {
				t.Errorf("heartbeat past its deadline: error %v, want an error: %v", err, tt.wantErr)
			}
		})
	}
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
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := grpc.NewServer()
			workflowservice.RegisterWorkflowServiceServer(srv, busyHeartbeats{code: code})
			go srv.Serve(l)
			t.Cleanup(srv.Stop)
			for _, tt := range []struct {
				name    string
				opts    func(client.Options) client.Options
				wantErr bool
			}{
				{"with ClientOptions", ClientOptions, false},
				{"without", func(o client.Options) client.Options { return o }, true},
			} {
				t.Run(tt.name, func(t *testing.T) {
					c, err := client.NewLazyClient(tt.opts(client.Options{HostPort: l.Addr().String()}))
					if err != nil {
						t.Fatal(err)
					}
					defer c.Close()
					ctx, cancel := context.WithTimeout(context.Background(), time.Second)
					defer cancel()
					err = c.RecordActivityHeartbeat(ctx, []byte("t"))
					t.Logf("%s: %v", tt.name, err)
					if (err != nil) != tt.wantErr {
						t.Errorf("heartbeat to a busy server: error %v, want an error: %v", err, tt.wantErr)
					}
				})
			}
		})
	}
}
