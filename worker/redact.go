package worker

import (
	"context"

	commonpb "go.temporal.io/api/common/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/crashwall/chaos/redact"
)

// redactRequests replaces every secret value known (redact.Known) in each request a
// client sends to Temporal, before it leaves the process: the payloads (activity inputs
// and results, heartbeat details, signals, queries, memos: what the history keeps) and
// every text field (a failure's message and stack trace, which are no payloads). One
// place for all of it, below the SDK, so no payload or error path is missed.
//
// A payload's data is rewritten only where it is text (json/plain, binary/plain); a
// serialized protobuf's lengths would not survive it. Other bytes fields (task tokens)
// are never touched. With no secret known a request passes untouched and unwalked.
func redactRequests(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if m, ok := req.(proto.Message); ok && !redact.Known.Empty() {
		redactMessage(m.ProtoReflect())
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

var payloadName = (&commonpb.Payload{}).ProtoReflect().Descriptor().FullName()

// redactMessage redacts m's text fields and its text payloads, at every depth.
func redactMessage(m protoreflect.Message) {
	if m.Descriptor().FullName() == payloadName {
		p := m.Interface().(*commonpb.Payload)
		switch string(p.GetMetadata()["encoding"]) {
		case "json/plain", "binary/plain":
			p.Data = redact.Known.Bytes(p.Data)
		}
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				if nv, ok := redactValue(fd, l.Get(i)); ok {
					l.Set(i, nv)
				}
			}
		case fd.IsMap():
			mv := v.Map()
			mv.Range(func(k protoreflect.MapKey, e protoreflect.Value) bool {
				if nv, ok := redactValue(fd.MapValue(), e); ok {
					mv.Set(k, nv)
				}
				return true
			})
		default:
			if nv, ok := redactValue(fd, v); ok {
				m.Set(fd, nv)
			}
		}
		return true
	})
}

// redactValue is v redacted, and whether it is to be set back (a changed string).
func redactValue(fd protoreflect.FieldDescriptor, v protoreflect.Value) (protoreflect.Value, bool) {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		redactMessage(v.Message())
	case protoreflect.StringKind:
		if s := redact.Known.String(v.String()); s != v.String() {
			return protoreflect.ValueOfString(s), true
		}
	}
	return v, false
}
