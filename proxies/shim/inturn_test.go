package shim

import (
	"testing"
	"time"
)

// InTurn times first and second, one after the other b.N times in the same run (so both
// see the same machine), and reports each one's mean (NAME-ms/call) and second's over
// first's (SECOND/FIRST); it returns the means in milliseconds. Exported for the
// benchmarks of package shim_test too; it is built into tests only.
func InTurn(b *testing.B, firstName string, first func(), secondName string, second func()) (firstMs, secondMs float64) {
	var d1, d2 int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now().UnixNano()
		first()
		t1 := time.Now().UnixNano()
		second()
		t2 := time.Now().UnixNano()
		d1 += t1 - t0
		d2 += t2 - t1
	}
	b.StopTimer()
	n := float64(b.N)
	firstMs, secondMs = float64(d1)/n/1e6, float64(d2)/n/1e6
	b.ReportMetric(firstMs, firstName+"-ms/call")
	b.ReportMetric(secondMs, secondName+"-ms/call")
	b.ReportMetric(float64(d2)/float64(d1), secondName+"/"+firstName)
	return firstMs, secondMs
}
