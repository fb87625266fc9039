//go:build !noserver && !unix

package worker

import "os"

// lockDataDir is a no-op where flock is missing: two servers on one data
// directory are then the user's to avoid.
func lockDataDir(dir string) (*os.File, error) { return nil, nil }
