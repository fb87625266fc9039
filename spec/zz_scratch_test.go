package spec

import (
	"fmt"
	"testing"
)

func TestScratch(t *testing.T) {
	for _, y := range []string{"a: 1\nseed: [1, 2\n", "a: b: c\n", "a:\n\t- b\n", "a: &x [*x]\nb: *x\n", "a: *nope\n", "---\na: 1\n---\nb: 2\n", "# only\n", "&a {<<: *a}"} {
		_, err := Parse("spec.yaml", []byte(y))
		fmt.Printf("%q\n%v\n\n", y, err)
	}
}
