package worker

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"runtime/debug"
	"sync"

	sdkworker "go.temporal.io/sdk/worker"
)

// The Temporal SDK names the binary a worker runs (its BinaryChecksum, recorded in each
// workflow task's completion as the build a reset point belongs to) by reading the whole
// executable through MD5 the first time a process makes a worker. chaos carries the
// Temporal server and its web UI, so that read is a large share of every `chaos run`,
// `chaos server` and `chaos worker` start, paid again by the server's own internal
// worker (docs/ARCHITECTURE.md has the profile's figures).
// identifyBinary names it instead from what changes whenever the file does: its path,
// size and modification time, and the build's VCS revision when it has one.
var identifyOnce sync.Once

func identifyBinary() {
	identifyOnce.Do(func() { sdkworker.SetBinaryChecksum(BinaryID()) })
}

// BinaryID is this binary's name for the Temporal SDK (identifyBinary).
func BinaryID() string {
	h := sha256.New()
	if exe, err := os.Executable(); err == nil {
		if fi, err := os.Stat(exe); err == nil {
			fmt.Fprintf(h, "%s\x00%d\x00%d\x00", exe, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		fmt.Fprintf(h, "%s\x00%s\x00", bi.Main.Path, bi.Main.Version)
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
				fmt.Fprintf(h, "%s=%s\x00", s.Key, s.Value)
			}
		}
	}
	return "chaos-" + hex.EncodeToString(h.Sum(nil)[:12])
}
