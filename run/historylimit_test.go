package run

import "testing"

// TestHistoryLimitFor: a run's chain continues as new after ten rounds of its concurrency
// (at least DefaultHistoryLimit trials), so the wait for its batches at each link is
// rare, and no run of the chain hands out more than 250 batches whatever the concurrency.
func TestHistoryLimitFor(t *testing.T) {
	for _, c := range []struct{ concurrency, want int }{
		{0, DefaultHistoryLimit}, {1, DefaultHistoryLimit}, {16, DefaultHistoryLimit}, {1000, DefaultHistoryLimit},
		{2000, DefaultHistoryLimit}, {4000, 40_000}, {100_000, 50_000},
	} {
		if got := HistoryLimitFor(c.concurrency); got != c.want {
			t.Errorf("HistoryLimitFor(%d) = %d, want %d", c.concurrency, got, c.want)
		}
		if got := HistoryLimitFor(c.concurrency); got/DefaultBatchSize > 250 {
			t.Errorf("HistoryLimitFor(%d) = %d: %d batches in one run", c.concurrency, got, got/DefaultBatchSize)
		}
	}
}
