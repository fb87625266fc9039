//go:build !linux

package worker

// fileLimit and taskLimit are only read on Linux; elsewhere the machine's limits bound
// nothing here (a trial that finds none left fails, as it did).
func fileLimit() (limit, open int, ok bool) { return 0, 0, false }

func taskLimit() (limit, used int, what string, ok bool) { return 0, 0, "", false }
