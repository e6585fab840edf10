package locomo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/reflector"
)

// Condenser condenses an agent's memory file: a reflector.
type Condenser interface {
	Condense(ctx context.Context, agent string, opts reflector.Options) (reflector.Result, error)
}

// ScratchCondenser condenses in the home h (the benchmark's, or a copy of
// it) with settings cfg and the extractive summariser over p's embedder,
// whatever cfg's summariser: it logs no events and mines nothing (the
// benchmark mines the whole of each file after).
func ScratchCondenser(p *palace.Palace, h home.Home, cfg config.Config, lg *slog.Logger) Condenser {
	cfg.Summarizer = config.Summarizer{Provider: "extractive"} // over Deps.Embedder
	return reflector.New(reflector.Deps{
		Home: h, Logger: lg, Settings: func() config.Config { return cfg }, Embedder: p.Embedder(),
	})
}

// CondenseEach is a Prepare that force-condenses each conversation's
// memory file with r, counting in *n those condensed.
func CondenseEach(r Condenser, n *int) func(ctx context.Context, agent string) error {
	return func(ctx context.Context, agent string) error {
		res, err := r.Condense(ctx, agent, reflector.Options{Force: true})
		if err != nil {
			return err
		}
		if res.Status == reflector.StatusCondensed {
			*n++
		}
		return nil
	}
}

// CoverageBudgets are the word budgets `bench locomo --coverage` measures.
var CoverageBudgets = []int{600, 1500, 3000}

// CondensedCoverage is what MeasureCondensedCoverage found: the coverage
// at each word budget, and how many conversations were condensed at it.
type CondensedCoverage struct {
	Coverage  []Coverage
	Condensed map[int]int
}

// MeasureCondensedCoverage renders every conversation into a home of its
// own per word budget (under dir), force-condenses it with the condenser
// condenserFor gives for that home and budget, and measures how many
// answers the memory file still holds. A file the condenser leaves as it
// is (e.g. too small to shrink) is measured as it is, with a note on
// notes.
func MeasureCondensedCoverage(ctx context.Context, samples []Sample, dir string, captions bool,
	condenserFor func(h home.Home, wordBudget int) Condenser, notes io.Writer) (CondensedCoverage, error) {
	out := CondensedCoverage{Condensed: map[int]int{}}
	for _, budget := range CoverageBudgets {
		h, err := home.Resolve(filepath.Join(dir, fmt.Sprintf("coverage-%d", budget)))
		if err != nil {
			return out, err
		}
		if err := h.Init(); err != nil {
			return out, err
		}
		r := condenserFor(h, budget)
		texts := map[string]MemoryText{}
		for _, s := range samples {
			path, err := WriteMemory(h, s, captions)
			if err != nil {
				return out, err
			}
			res, err := r.Condense(ctx, s.ID, reflector.Options{Force: true})
			var ae *reflector.AbortError
			switch {
			case errors.As(err, &ae):
				// Measured as it is (e.g. too small to shrink): the file
				// is what an agent would have.
				fmt.Fprintf(notes, "note: %s not condensed at word_budget %d: %s\n", s.ID, budget, ae.Message)
			case err != nil:
				return out, fmt.Errorf("locomo: condense %s: %w", s.ID, err)
			case res.Status == reflector.StatusCondensed:
				out.Condensed[budget]++
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return out, err
			}
			f, err := memfile.Parse(data)
			if err != nil {
				return out, fmt.Errorf("locomo: %s: %w", path, err)
			}
			texts[s.ID] = MemoryText{File: string(data), Condensed: f.Condensed()}
		}
		out.Coverage = append(out.Coverage, MeasureCoverage(samples, texts, budget))
	}
	return out, nil
}

// WriteText writes c, measured over the data set at path of n
// conversations, as a table by word budget.
func (c CondensedCoverage) WriteText(w io.Writer, path string, n int) {
	fmt.Fprintf(w, "LoCoMo %s: %d conversations; answers (categories 1-4) written in the condensed memory file\n\n", path, n)
	fmt.Fprintf(w, "%-11s %9s %9s %10s %10s %10s\n", "word_budget", "questions", "cond.words", "file", "condensed", "condensed#")
	for _, x := range c.Coverage {
		fmt.Fprintf(w, "%-11d %9d %9.0f %9.1f%% %9.1f%% %5d of %d\n", x.WordBudget, x.Questions, x.CondensedWords, 100*x.File, 100*x.Condensed, c.Condensed[x.WordBudget], n)
	}
}
