//go:build noserver

package worker

import (
	"context"
	"errors"
	"testing"
)

func TestStartServerWithoutServer(t *testing.T) {
	_, err := StartServer(context.Background(), ServerConfig{})
	if !errors.Is(err, ErrNoEmbeddedServer) {
		t.Fatalf("StartServer error = %v, want ErrNoEmbeddedServer", err)
	}
}
