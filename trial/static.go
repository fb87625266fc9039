package trial

// StaticBinary refuses a binary that needs a dynamic loader (an image without the host's
// libraries could not start it): the rule the worker keeps for the relay, for a plan to
// say of the {chaos} binary it mounts into a container (cmd/chaos, docs/deploy.md).
func StaticBinary(path string) error { return staticBinary(path) }
