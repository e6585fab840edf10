package updates

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/quantile"
	"github.com/hivemem/hivemem/internal/store"
)

// Results is how many hits each question asks for.
const Results = 10

// Options configures a run.
type Options struct {
	Gen      GenOptions
	Modes    []string // default: lexical, vector, hybrid (vector modes only with an embedder)
	Progress func(done, total int)
}

// Metrics is one mode's result. Rates are over the current questions
// (one per subject) unless named past_; marks count the hits that carry
// superseded_by.
type Metrics struct {
	Questions int `json:"questions"`
	// CurrentFirst: the newest statement is the top hit.
	CurrentFirst float64 `json:"current_first"`
	// CurrentAboveStale: the newest statement is among the hits and above
	// every older statement of the subject.
	CurrentAboveStale float64 `json:"current_above_stale"`
	// CurrentAt5: the newest statement is in the top 5.
	CurrentAt5 float64 `json:"current@5"`
	// ByChanges is current-first by how often the value changed (1, 2, 3).
	ByChanges map[string]float64 `json:"current_first_by_changes"`
	// PastQuestions asks for an older value by its section's date;
	// PastFirst: that section is the top hit.
	PastQuestions int     `json:"past_questions"`
	PastFirst     float64 `json:"past_first"`
	// StaleMarked: of the older statements of the subject among the hits
	// of the current questions, the share marked superseded.
	StaleMarked float64 `json:"stale_marked"`
	// WrongMarks: hits marked superseded that are not an older statement
	// of the question's subject (over every question, past ones too),
	// per question.
	WrongMarks float64 `json:"wrong_marks_per_question"`
	LatencyP50 float64 `json:"latency_ms_p50"`
	LatencyP95 float64 `json:"latency_ms_p95"`
}

// Result is the whole run.
type Result struct {
	Seed        uint64             `json:"seed"`
	Agents      int                `json:"agents"`
	Subjects    int                `json:"subjects"`
	Sections    int                `json:"sections"`
	Drawers     int                `json:"drawers"`
	MineSeconds float64            `json:"mine_seconds"`
	Modes       map[string]Metrics `json:"modes"`
}

// Write puts the hive's memory files into p's home.
func Write(p *palace.Palace, h Hive) error {
	for _, a := range h.Agents {
		path, err := p.Home().MemoryPath(a.ID)
		if err != nil {
			return fmt.Errorf("updates: agent %q: %w", a.ID, err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("updates: %w", err)
		}
		if err := os.WriteFile(path, a.File, 0o644); err != nil {
			return fmt.Errorf("updates: %w", err)
		}
	}
	return nil
}

// Run generates the hive, mines it into p and asks every question in
// every mode.
func Run(ctx context.Context, p *palace.Palace, opts Options) (Result, error) {
	gen := opts.Gen.withDefaults()
	h := Generate(gen)
	res := Result{Seed: gen.Seed, Agents: len(h.Agents), Modes: map[string]Metrics{}}
	for _, a := range h.Agents {
		res.Sections += len(a.Sections)
	}
	for _, q := range h.Questions {
		if !q.Past {
			res.Subjects++
		}
	}
	if err := Write(p, h); err != nil {
		return res, err
	}
	start := time.Now()
	if _, err := p.Mine(ctx, p.Home().HiveDir(), palace.MineOptions{}); err != nil {
		return res, fmt.Errorf("updates: mine: %w", err)
	}
	res.MineSeconds = time.Since(start).Seconds()
	st, err := p.Store().Stats(ctx)
	if err != nil {
		return res, fmt.Errorf("updates: %w", err)
	}
	res.Drawers = st.Drawers

	modes := opts.Modes
	if len(modes) == 0 {
		modes = []string{palace.ModeLexical}
		if p.Embedder() != nil {
			modes = append(modes, palace.ModeVector, palace.ModeHybrid)
		}
	}
	agents := map[string]Agent{}
	for _, a := range h.Agents {
		agents[a.ID] = a
	}
	done, total := 0, len(modes)*len(h.Questions)
	for _, mode := range modes {
		var acc accum
		for _, q := range h.Questions {
			t0 := time.Now()
			hits, err := p.Search(ctx, palace.Query{Text: q.Text, Mode: mode, Results: Results, Filter: store.Filter{Wing: q.Agent}})
			acc.lat = append(acc.lat, float64(time.Since(t0).Microseconds())/1000)
			if err != nil && !errors.Is(err, palace.ErrNoWords) {
				return res, fmt.Errorf("updates %s %q: %w", q.Agent, q.Text, err)
			}
			acc.add(q, agents[q.Agent], hits)
			done++
			if opts.Progress != nil {
				opts.Progress(done, total)
			}
		}
		res.Modes[mode] = acc.metrics()
	}
	return res, nil
}

// sectionOf is the index of the section a hit starts in, or -1.
func sectionOf(a Agent, h palace.Hit) int {
	for i, s := range a.Sections {
		if h.LineStart >= s.LineStart && h.LineStart <= s.LineEnd {
			return i
		}
	}
	return -1
}

// rightMark reports whether a hit starting in section s is rightly
// marked superseded by drawer by: s states a subject, and by (when it is
// among the hits) states the same subject later.
func rightMark(ag Agent, hits []palace.Hit, s int, by string) bool {
	if s < 0 || ag.Sections[s].Subject == "" {
		return false
	}
	for _, h := range hits {
		if h.ID == by {
			t := sectionOf(ag, h)
			return t >= 0 && ag.Sections[t].Subject == ag.Sections[s].Subject && ag.Sections[t].Version > ag.Sections[s].Version
		}
	}
	return true
}

type accum struct {
	cur, past                 int
	first, above, at5, pastOK int
	byChanges, byChangesN     [4]int
	stale, staleMarked        int
	wrongMarks                int
	lat                       []float64
}

func (a *accum) add(q Question, ag Agent, hits []palace.Hit) {
	stale := map[int]bool{}
	for _, s := range q.Stale {
		stale[s] = true
	}
	want := -1 // rank of the wanted section
	firstStale := -1
	for i, h := range hits {
		s := sectionOf(ag, h)
		if s == q.Want && want < 0 {
			want = i
		}
		if stale[s] && firstStale < 0 {
			firstStale = i
		}
		if h.SupersededBy != "" && !rightMark(ag, hits, s, h.SupersededBy) {
			a.wrongMarks++
		}
		if !q.Past && stale[s] {
			a.stale++
			if h.SupersededBy != "" {
				a.staleMarked++
			}
		}
	}
	if q.Past {
		a.past++
		if want == 0 {
			a.pastOK++
		}
		return
	}
	a.cur++
	a.byChangesN[q.Changes]++
	if want == 0 {
		a.first++
		a.byChanges[q.Changes]++
	}
	if want >= 0 && (firstStale < 0 || want < firstStale) {
		a.above++
	}
	if want >= 0 && want < 5 {
		a.at5++
	}
}

func ratio(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

func (a *accum) metrics() Metrics {
	m := Metrics{Questions: a.cur, PastQuestions: a.past,
		CurrentFirst: ratio(a.first, a.cur), CurrentAboveStale: ratio(a.above, a.cur), CurrentAt5: ratio(a.at5, a.cur),
		PastFirst: ratio(a.pastOK, a.past), StaleMarked: ratio(a.staleMarked, a.stale),
		WrongMarks: ratio(a.wrongMarks, a.cur+a.past), ByChanges: map[string]float64{}}
	for c := 1; c < len(a.byChanges); c++ {
		if a.byChangesN[c] > 0 {
			m.ByChanges[fmt.Sprint(c)] = ratio(a.byChanges[c], a.byChangesN[c])
		}
	}
	m.LatencyP50, m.LatencyP95 = quantile.NearestRank(a.lat, 50), quantile.NearestRank(a.lat, 95)
	return m
}
