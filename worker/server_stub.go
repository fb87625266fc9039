//go:build noserver

package worker

import "context"

// Server is the embedded Temporal server; this binary was built without it.
type Server struct{}

// StartServer always fails with ErrNoEmbeddedServer: this binary was built with
// -tags noserver.
func StartServer(ctx context.Context, cfg ServerConfig) (*Server, error) {
	return nil, ErrNoEmbeddedServer
}

// FrontendAddr is empty: there is no embedded server.
func (s *Server) FrontendAddr() string { return "" }

// UIAddr is empty: there is no embedded server.
func (s *Server) UIAddr() string { return "" }

// Stop does nothing: there is no embedded server.
func (s *Server) Stop() error { return nil }
