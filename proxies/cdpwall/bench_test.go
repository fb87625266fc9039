package cdpwall

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/crashwall/chaos/faults"
	"github.com/crashwall/chaos/proxies/hub"
	"github.com/crashwall/chaos/record"
	"github.com/crashwall/chaos/spec"
	"github.com/crashwall/chaos/tests/browser/site"
)

// BenchmarkPageLoadAndWrite measures one page load of the test site and one write (the
// form's save) through the guard against the same on a second Chromium with no guard, in
// the same run, alternating the two each iteration so that the machine's load falls on
// both alike. It reports the medians and the guard's ratio to direct.
//
//	go test ./proxies/cdpwall -run '^$' -bench PageLoadAndWrite -benchtime 30x
func BenchmarkPageLoadAndWrite(b *testing.B) {
	ctx := context.Background()
	st, err := site.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	s, err := spec.Parse("bench.yaml", []byte(fmt.Sprintf(browserSpec, st.URL)))
	if err != nil {
		b.Fatal(err)
	}
	w, err := record.Open(filepath.Join(b.TempDir(), "record.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	clean := faults.Condition{ID: faults.CleanID, SuccessPossible: true}
	h, err := hub.NewHub(hub.Config{Spec: s, Condition: clean, Record: w})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close("bench over")

	direct, err := LaunchChromium(ctx, "", b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer direct.Close()
	guarded, err := LaunchChromium(ctx, "", b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer guarded.Close()
	g, err := Start(ctx, Config{Hub: h, Browser: guarded.HTTP, Rules: s.Browser, Condition: clean})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()

	dial := func(base string) *conn {
		ws, err := browserWS(ctx, base)
		if err != nil {
			b.Fatal(err)
		}
		c, err := dialConn(ctx, ws)
		if err != nil {
			b.Fatal(err)
		}
		go c.run(context.Background(), func(message) {})
		return c
	}
	dc, gc := dial(direct.HTTP), dial(g.URL())
	defer dc.close()
	defer gc.close()

	once := func(c *conn) time.Duration {
		start := time.Now()
		target, sess := openTab(ctx, b, c, st.URL+"/")
		expr := `new Promise(r => { const f = () => document.body && document.body.dataset.loaded ? r(1) : setTimeout(f, 2); f(); })
			.then(() => { document.getElementById('name').value = 'Ada'; return saveRecord(); })
			.then(() => document.getElementById('status').textContent)`
		var res struct {
			Result struct {
				Value any `json:"value"`
			} `json:"result"`
		}
		for {
			// The first evaluation may land in about:blank's context, which the navigation
			// destroys: evaluate again in the site's.
			err := c.call(ctx, sess, "Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true}, &res)
			if err == nil {
				break
			}
			if !strings.Contains(err.Error(), "context was destroyed") && !strings.Contains(err.Error(), "Cannot find context") {
				b.Fatal(err)
			}
		}
		if res.Result.Value != "Saved" {
			b.Fatalf("the page shows %v, want Saved", res.Result.Value)
		}
		d := time.Since(start)
		c.call(ctx, "", "Target.closeTarget", map[string]any{"targetId": target}, nil)
		return d
	}
	once(dc) // warm both browsers up
	once(gc)
	var ds, gs []time.Duration
	b.ResetTimer()
	for range b.N {
		ds = append(ds, once(dc))
		gs = append(gs, once(gc))
	}
	b.StopTimer()
	md, mg := median(ds), median(gs)
	b.ReportMetric(float64(md.Microseconds())/1000, "direct-ms/op")
	b.ReportMetric(float64(mg.Microseconds())/1000, "guard-ms/op")
	b.ReportMetric(float64(mg)/float64(md), "guard/direct")
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
