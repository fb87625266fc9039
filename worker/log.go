//go:build !noserver

package worker

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"sync/atomic"

	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"

	"github.com/crashwall/chaos/redact"
)

// serverLogger resolves cfg's logging choice: cfg.Logger, else a text log in
// cfg.LogFile, else nothing. closeLog closes the file, if any.
func serverLogger(cfg ServerConfig) (logger *slog.Logger, closeLog func() error, err error) {
	noop := func() error { return nil }
	switch {
	case cfg.Logger != nil:
		return cfg.Logger, noop, nil
	case cfg.LogFile != "":
		f, err := os.OpenFile(cfg.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("open the server log file: %w", err)
		}
		return slog.New(slog.NewTextHandler(redact.Known.EachWrite(f), &slog.HandlerOptions{Level: slog.LevelInfo})), f.Close, nil
	default:
		return slog.New(slog.DiscardHandler), noop, nil
	}
}

// logGate quiets a server's logs around Stop. The server's system workers are
// never stopped by Temporal (see Server.Stop) and keep reporting failed polls;
// from the start of Stop only errors pass, and after it nothing.
type logGate struct{ min atomic.Int64 } // a slog.Level

func newLogGate() *logGate {
	g := &logGate{}
	g.min.Store(int64(slog.LevelDebug))
	return g
}

func (g *logGate) stopping() { g.min.Store(int64(slog.LevelError)) }
func (g *logGate) stopped()  { g.min.Store(math.MaxInt64) }
func (g *logGate) allows(level slog.Level) bool {
	return int64(level) >= g.min.Load()
}

// slogLogger adapts a *slog.Logger to the server's logger interface.
type slogLogger struct {
	log  *slog.Logger
	gate *logGate
}

var (
	_ log.Logger      = slogLogger{}
	_ log.WithLogger  = slogLogger{}
	_ log.SLogWrapper = slogLogger{}
)

func (l slogLogger) Debug(msg string, tags ...tag.Tag) { l.emit(slog.LevelDebug, msg, tags) }
func (l slogLogger) Info(msg string, tags ...tag.Tag)  { l.emit(slog.LevelInfo, msg, tags) }
func (l slogLogger) Warn(msg string, tags ...tag.Tag)  { l.emit(slog.LevelWarn, msg, tags) }
func (l slogLogger) Error(msg string, tags ...tag.Tag) { l.emit(slog.LevelError, msg, tags) }

// The server's panic and fatal levels must not take the chaos process down with
// them: they are logged as errors.
func (l slogLogger) DPanic(msg string, tags ...tag.Tag) { l.emit(slog.LevelError, msg, tags) }
func (l slogLogger) Panic(msg string, tags ...tag.Tag)  { l.emit(slog.LevelError, msg, tags) }
func (l slogLogger) Fatal(msg string, tags ...tag.Tag)  { l.emit(slog.LevelError, msg, tags) }

func (l slogLogger) With(tags ...tag.Tag) log.Logger {
	return slogLogger{log: slog.New(l.log.Handler().WithAttrs(tagAttrs(tags))), gate: l.gate}
}

func (l slogLogger) SLog() *slog.Logger { return l.log }

func (l slogLogger) emit(level slog.Level, msg string, tags []tag.Tag) {
	ctx := context.Background()
	if l.gate.allows(level) && l.log.Enabled(ctx, level) {
		l.log.LogAttrs(ctx, level, msg, tagAttrs(tags)...)
	}
}

func tagAttrs(tags []tag.Tag) []slog.Attr {
	attrs := make([]slog.Attr, len(tags))
	for i, t := range tags {
		attrs[i] = slog.Any(t.Key(), t.Value())
	}
	return attrs
}
