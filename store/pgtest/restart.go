package pgtest

import (
	"fmt"
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
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200", c.Port, c.dir)
	if out, err := c.cmd(runAs, "pg_ctl", "-D", c.data(), "-o", opts, "-l", c.logPath(), "-w", "-t", "60", "start").CombinedOutput(); err != nil {
		c.tb.Fatalf("pgtest: pg_ctl start again: %v\n%s\nserver log:\n%s", err, out, c.Log())
	}
	c.stopped = false
	if err := c.waitReady(time.Minute); err != nil {
		c.tb.Fatalf("pgtest: %v\nserver log:\n%s", err, c.Log())
	}
}
