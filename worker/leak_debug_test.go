//go:build !noserver

package worker

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"
)

func TestLeakDebug(t *testing.T) {
	dir := t.TempDir()
	s, err := StartServer(context.Background(), ServerConfig{DataDir: dir, Logger: slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	println("=========== STOP")
	s.Stop()
	println("=========== STOPPED")
	time.Sleep(10 * time.Second)
}
