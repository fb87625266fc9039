// Package trial runs one trial of an experiment without Temporal: its workspace, its hub
// and the parts around it (model proxy, stdio relay, script shim, browser guard, real
// servers, container runtime), its agent, its evidence and verdict inputs, and its
// teardown. A Host holds what every trial on this machine needs and the trials it serves.
//
//	PrepareWorkspace  trial folder (fresh) + sandbox: git checkout at a ref, copied files
//	StartHub          hub (world, condition, record) served on 127.0.0.1:0; parts; tokens filled in
//	RunAgent          sh -c COMMAND as a process group, or a container; stdout, stderr to files
//	Watch             the record as it is written -> abort rules -> the reason
//	Verify            final world x state checks, parts' evidence, closing message -> result.json
//	Teardown          close the parts and the hub (session_end), changes.diff, remove the sandbox
//
// Package activities wraps these as Temporal activities (heartbeats, error types,
// slots); nothing here imports Temporal (tests/layout holds that).
package trial
