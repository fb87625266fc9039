package pgtest

import (
	"time"
)

// Restart starts a stopped server again on the same port and files, as PostgreSQL
// comes back after a crash (it replays its WAL), and waits until it accepts
// connections.
func (c *Cluster) Restart() {
	c.tb.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stopped {
		return
	}
	runAs, err := serverUser()
	if err != nil {
		c.tb.Fatalf("pgtest: %v", err)
	}
	if out, err := c.cmd(runAs, "pg_ctl", "-D", c.data(), "-o", c.options(), "-l", c.logPath(), "-w", "-t", "60", "start").CombinedOutput(); err != nil {
		c.tb.Fatalf("pgtest: pg_ctl start again: %v\n%s\nserver log:\n%s", err, out, c.Log())
	}
	c.stopped = false
	if err := c.waitReady(time.Minute); err != nil {
		c.tb.Fatalf("pgtest: %v\nserver log:\n%s", err, c.Log())
	}
}
