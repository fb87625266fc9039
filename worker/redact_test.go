package worker

import (
	"context"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	failurepb "go.temporal.io/api/failure/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/crashwall/chaos/redact"
)

// TestRedactRequests: a secret known to the process leaves in no request to Temporal,
// in a JSON payload, a failure's message and stack trace, or a nested cause; a
// protobuf payload and the task token are sent as they are.
func TestRedactRequests(t *testing.T) {
	const secret = "sk-interceptor-7f3a9"
	redact.Known.Add("CHAOS_TEST_INTERCEPTOR", secret)
	json := func(s string) *commonpb.Payload {
		return &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(s)}
	}
	protoPayload := &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("binary/protobuf")}, Data: []byte("\x0a\x14" + secret)}
	completed := &workflowservice.RespondActivityTaskCompletedRequest{
		TaskToken: []byte(secret),
		Result:    &commonpb.Payloads{Payloads: []*commonpb.Payload{json(`{"closing":"the key is ` + secret + `"}`), protoPayload}},
	}
	failed := &workflowservice.RespondActivityTaskFailedRequest{
		Failure: &failurepb.Failure{Message: "tool said " + secret, StackTrace: "at " + secret,
			Cause: &failurepb.Failure{Message: "cause " + secret}},
		LastHeartbeatDetails: &commonpb.Payloads{Payloads: []*commonpb.Payload{json(`"` + secret + `"`)}},
	}
	var sent []proto.Message
	invoke := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, opts ...grpc.CallOption) error {
		sent = append(sent, proto.Clone(req.(proto.Message)))
		return nil
	}
	for _, req := range []proto.Message{completed, failed} {
		if err := redactRequests(context.Background(), "m", req, nil, nil, invoke); err != nil {
			t.Fatal(err)
		}
	}
	marker := redact.Marker("CHAOS_TEST_INTERCEPTOR")
	c := sent[0].(*workflowservice.RespondActivityTaskCompletedRequest)
	if got := string(c.Result.Payloads[0].Data); got != `{"closing":"the key is `+marker+`"}` {
		t.Errorf("JSON payload sent as %q", got)
	}
	if string(c.Result.Payloads[1].Data) != string(protoPayload.Data) || string(c.TaskToken) != secret {
		t.Errorf("a protobuf payload or the task token was changed: %q, %q", c.Result.Payloads[1].Data, c.TaskToken)
	}
	f := sent[1].(*workflowservice.RespondActivityTaskFailedRequest)
	for what, s := range map[string]string{"message": f.Failure.Message, "stack trace": f.Failure.StackTrace, "cause": f.Failure.Cause.Message,
		"heartbeat details": string(f.LastHeartbeatDetails.Payloads[0].Data)} {
		if strings.Contains(s, secret) || !strings.Contains(s, marker) {
			t.Errorf("the failure's %s was sent as %q", what, s)
		}
	}
}
