package httpwall

import (
	"net/http"

	"github.com/crashwall/chaos/proxies/hub"
)

// HandlerSDKOnly is Handler with every MCP message answered by the SDK: what the tests
// compare the guard's own answers with.
func HandlerSDKOnly(h *hub.Hub) http.Handler { return protect(newMux(h, false), "") }
