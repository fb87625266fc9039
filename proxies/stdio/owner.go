package stdio

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A socket folder (wall-*) names the process that serves it in a file of its own
// (ownerFile: its pid and, where the system tells it, its start time, so a pid used again
// by another process is not taken for it). A process killed before it closed its streams
// leaves its folders behind; RemoveStaleFolders removes those whose process is gone.
const ownerFile = "owner"

// writeOwner names this process as the owner of the socket folder dir.
func writeOwner(dir string) error {
	return os.WriteFile(filepath.Join(dir, ownerFile), []byte(processID(os.Getpid())+"\n"), 0o600)
}

// processID is "PID START" for a live process (START: its start time, "" where the
// system does not say), "" for one that is gone.
func processID(pid int) string {
	if !processAlive(pid) {
		return ""
	}
	return strings.TrimSpace(fmt.Sprintf("%d %s", pid, processStart(pid)))
}

// RemoveStaleFolders removes the socket folders (wall-*) under parent whose owner is gone,
// and returns how many it removed. A folder that names no owner (one being made, or made
// by a process that cannot say) is kept.
func RemoveStaleFolders(parent string) (int, error) {
	dirs, err := filepath.Glob(filepath.Join(parent, "wall-*"))
	if err != nil {
		return 0, err
	}
	removed := 0
	var firstErr error
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue
		}
		owner := strings.TrimSpace(string(b))
		pidText, _, _ := strings.Cut(owner, " ")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || processID(pid) == owner {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("remove the socket folder of a process that is gone: %w", err)
			}
			continue
		}
		removed++
	}
	return removed, firstErr
}
