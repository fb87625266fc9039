// Package worker is the worker wiring: the embedded Temporal dev server and its web UI.
//
// StartServer runs a complete Temporal server (frontend, history, matching and the
// internal worker that drives Schedules) inside the chaos process, persisted in a
// SQLite file, or in PostgreSQL when ServerConfig.DB names one (its schema set up or
// upgraded on start), so run history survives a restart, with the Temporal web UI next
// to it:
//
//	chaos process
//	  StartServer ──> temporal (frontend :Port, history, matching, worker) ──> DataDir/temporal.db
//	              └─> ui-server (:UIPort) ──gRPC──> frontend
//
// Build with -tags noserver for a lighter binary without the embedded server; StartServer
// then returns ErrNoEmbeddedServer and the user must point chaos at a server with --temporal.
package worker
