package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/crashwall/chaos/proxies/upstream"
	"github.com/crashwall/chaos/spec"
)

// discoverServers reaches a spec's real servers (if any) and adds their tools to it.
func discoverServers(s *spec.Spec) (*spec.Spec, error) {
	s, _, err := discoverClassified(s)
	return s, err
}

// discoverClassified is discoverServers, also saying how each server tool was classified.
func discoverClassified(s *spec.Spec) (*spec.Spec, []upstream.Classification, error) {
	if len(s.Servers) == 0 {
		return s, nil, nil
	}
	out, classes, err := upstream.Discover(context.Background(), s, upstream.UpstreamConfig{})
	if err != nil {
		where := s.Path
		if where == "" {
			where = s.Name
		}
		return nil, nil, fmt.Errorf("%s: %w", where, err)
	}
	return out, classes, nil
}

// printClassification shows which server tools write, and where that came from.
func printClassification(w io.Writer, classes []upstream.Classification) {
	if len(classes) == 0 {
		return
	}
	fmt.Fprintf(w, "\nTools of real servers (effect, and where it came from; set servers[].tools.NAME.effect to change one):\n")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tSERVER\tEFFECT\tFROM")
	for _, c := range classes {
		name := c.Tool
		if c.Remote != c.Tool {
			name += " (" + c.Remote + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, c.Server, c.Effect, c.From)
	}
	tw.Flush()
}
