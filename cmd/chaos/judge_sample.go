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
	rng := rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15))
	rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	if opts.N > 0 && opts.N < len(ids) {
		ids = ids[:opts.N]
	}
	abs, _ := filepath.Abs(opts.Run)
	key := judgeKey{Run: abs, Items: map[string]string{}}
	f, err := os.Create(opts.Out)
	if err != nil {
		return badInput(err)
	}
	w := csv.NewWriter(f)
	w.Write([]string{"id", "label (claimed / not claimed / unsure)", "closing message"})
	for i, id := range ids {
		// Opaque ids: a trial id names its condition, which would unblind the labeller.
		fid := fmt.Sprintf("m%03d", i+1)
		key.Items[fid] = id
		w.Write([]string{fid, "", msgs[id]})
	}
	if err := closeForm(f, w, opts.Out, key); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.Out, "form: %s (%d closing messages)\nkey:  %s (keep it; do not show it to the labeller)\n", opts.Out, len(ids), opts.Out+".key.json")
	return nil
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
