package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/crashwall/chaos/proxies/llm"
	"github.com/spf13/cobra"
)

// NewCmdModel builds `chaos model`, the commands about the model layer.
func NewCmdModel(ios *IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model",
		Short: "The model layer: a stand-in model for tests and demos (see chaos faults --model for the faults)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return badInput(errors.New("give a subcommand: chaos model standin --script FILE"))
		},
	}
	cmd.AddCommand(NewCmdModelStandin(ios, nil))
	return cmd
}

// StandinOptions are the inputs of `chaos model standin`.
type StandinOptions struct {
	IO     *IOStreams
	Script string
	Listen string
	// Ready, when set, receives the URL once the stand-in serves (tests).
	Ready func(url string)
}

// NewCmdModelStandin builds `chaos model standin --script FILE [--listen ADDR]`.
func NewCmdModelStandin(ios *IOStreams, runF func(context.Context, *StandinOptions) error) *cobra.Command {
	opts := &StandinOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "standin --script FILE [--listen 127.0.0.1:0]",
		Short: "Serve a stand-in model that answers by a script (OpenAI Chat Completions and Responses, Anthropic Messages; streamed or not)",
		Long: `chaos model standin serves an offline model that answers by a small script (call this
tool with these arguments, then answer this text once a tool result arrives), so a real
agent client runs end to end with no key. It prints its URL, then serves until Ctrl-C.

It answers POST .../chat/completions, .../responses and .../messages under any prefix:
give OpenAI clients URL/v1 as their base URL and Anthropic clients URL. As a spec's
model.upstream, write it the same way (the model proxy's {llm_url} stands in for it).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Script == "" {
				return badInput(errors.New("give the script the stand-in answers by: --script FILE"))
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return standinRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Script, "script", "", "the script (YAML or JSON): a list of steps {when, tool, arguments} or {when, text}")
	cmd.Flags().StringVar(&opts.Listen, "listen", "127.0.0.1:0", "address to listen on")
	return cmd
}

func standinRun(ctx context.Context, opts *StandinOptions) error {
	script, err := llm.LoadScript(opts.Script)
	if err != nil {
		return badInput(err)
	}
	ln, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		return badInput(fmt.Errorf("listen on %s: %w", opts.Listen, err))
	}
	srv := &http.Server{Handler: llm.NewStandin(script), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	url := "http://" + ln.Addr().String()
	fmt.Fprintf(opts.IO.Out, "stand-in model: %s\n", url)
	fmt.Fprintf(opts.IO.Out, "  OpenAI base URL:    %s/v1\n  Anthropic base URL: %s\n", url, url)
	fmt.Fprintln(opts.IO.Out, "ready; Ctrl-C stops")
	if opts.Ready != nil {
		opts.Ready(url)
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	<-done
	return nil
}
