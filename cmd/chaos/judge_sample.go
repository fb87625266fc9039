package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/crashwall/chaos/report"
)

// judgeSample writes the blind form and its key.
func judgeSample(opts *JudgeSampleOptions) error {
	if opts.Out == "" {
		return badInput(errors.New("say where to write the form: --out FORM.csv"))
	}
	r, err := report.LoadRun(opts.Run)
	if err != nil {
		return badInput(err)
	}
	var ids []string
	msgs := map[string]string{}
	for _, t := range r.Results {
		if strings.TrimSpace(t.Closing) != "" {
			ids = append(ids, t.ID)
			msgs[t.ID] = t.Closing
		}
	}
	if len(ids) == 0 {
		return badInput(fmt.Errorf("%s has no closing messages to label", opts.Run))
	}
	n, err := writeForm(opts, judgeKey{}, ids, "m", []string{"id", "label (claimed / not claimed / unsure)", "closing message"},
		func(id string) (string, []string, error) { return id, []string{"", msgs[id]}, nil })
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.Out, "form: %s (%d closing messages)\nkey:  %s (keep it; do not show it to the labeller)\n", opts.Out, n, opts.Out+".key.json")
	return nil
}

// writeForm writes the labelling form opts.Out and its key: the header, then a row an
// item, the items shuffled by opts.Seed and cut to opts.N (0: all), each row under an
// opaque id, prefix and its place (m001: a trial id names its condition, which would
// unblind the labeller), which the key maps back to the item's trial. row is an item's
// trial and the cells of its row after the id. It returns how many rows it wrote.
func writeForm[T any](opts *JudgeSampleOptions, key judgeKey, items []T, prefix string, header []string, row func(T) (trial string, cells []string, err error)) (int, error) {
	rng := rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15))
	rng.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
	if opts.N > 0 && opts.N < len(items) {
		items = items[:opts.N]
	}
	key.Run, _ = filepath.Abs(opts.Run)
	key.Items = map[string]string{}
	f, err := os.Create(opts.Out)
	if err != nil {
		return 0, badInput(err)
	}
	w := csv.NewWriter(f)
	w.Write(formCells(header))
	for i, it := range items {
		trial, cells, err := row(it)
		if err != nil {
			f.Close()
			return 0, err
		}
		fid := fmt.Sprintf("%s%03d", prefix, i+1)
		key.Items[fid] = trial
		w.Write(formCells(append([]string{fid}, cells...)))
	}
	return len(items), closeForm(f, w, opts.Out, key)
}

// formCells makes the cells of a form row safe to open in a spreadsheet: what the agent
// wrote must stay text there. Control characters (an ESC a terminal would act on, a NUL)
// are dropped, line ends kept; a cell a spreadsheet would read as a formula (starting
// with = + - @, a tab or a carriage return) gets a leading ' (OWASP's rule for CSV
// injection), which spreadsheets show as text and do not display.
func formCells(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		c = strings.ReplaceAll(c, "\r\n", "\n")
		c = strings.Map(func(r rune) rune {
			if r == '\n' || r == '\t' || (r >= 0x20 && r != 0x7f && !(r >= 0x80 && r <= 0x9f)) {
				return r
			}
			return -1
		}, c)
		if c != "" && strings.ContainsRune("=+-@\t\r", rune(c[0])) {
			c = "'" + c
		}
		out[i] = c
	}
	return out
}

// closeForm finishes a labelling form: the CSV flushed and closed, then its key (which
// rows are which trials) written beside it as OUT.key.json.
func closeForm(f *os.File, w *csv.Writer, out string, key any) error {
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(key, "", "  ")
	return os.WriteFile(out+".key.json", b, 0o644)
}
