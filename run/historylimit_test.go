package run

import "testing"

// TestHistoryLimitFor: a run never has fewer trials in flight than its concurrency for
// want of history limit (up to 2,000 at once), and no workflow run's history grows past
// 2,000 trials' worth whatever the concurrency.
func TestHistoryLimitFor(t *testing.T) {
	for _, c := range []struct{ concurrency, want int }{
		{0, DefaultHistoryLimit}, {1, DefaultHistoryLimit}, {16, DefaultHistoryLimit}, {500, 500},
		{501, 501}, {1000, 1000}, {2000, 2000}, {100000, 2000},
	} {
		if got := HistoryLimitFor(c.concurrency); got != c.want {
			t.Errorf("HistoryLimitFor(%d) = %d, want %d", c.concurrency, got, c.want)
		}
	}
}
