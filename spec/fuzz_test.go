package spec

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: whatever the bytes, Parse returns a spec or an *Errors, never both, never
// neither, and never panics.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.yaml")
	seeds = append(seeds, "../examples/support-ticket.yaml")
	for _, path := range seeds {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(base))
	f.Add([]byte("x-a: &a {<<: *a}\n"))
	f.Add([]byte("a: &x [*x, *x]\nb: [*x, *x]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("spec.yaml", data)
		if (s == nil) == (err == nil) {
			t.Fatalf("got spec %v and error %v: want exactly one", s, err)
		}
		var errs *Errors
		if err != nil && (!errors.As(err, &errs) || len(errs.Problems) == 0) {
			t.Fatalf("got error %T %v, want *Errors with problems", err, err)
		}
	})
}
