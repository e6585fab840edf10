package locomo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hivemem/hivemem/internal/chunk"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/quantile"
	"github.com/hivemem/hivemem/internal/store"
)

// Options configures a run.
type Options struct {
	Modes   []string // default: lexical, vector, hybrid (vector/hybrid only with an embedder)
	Limit   int      // questions per conversation, 0 = all
	Dataset string
	// NoCaptions leaves shared images out of the rendered turns (see Render).
	NoCaptions bool
	// AsSessions imports each conversation as its agent's session files
	// through capture's generic importer (see Haystack) instead of writing
	// it as a memory file, and searches the session room.
	AsSessions bool
	// NoQuestionDate searches as of today instead of as of the day of each
	// conversation's last session (Sample.AsOf; an ablation: a time a
	// question names, "last week", is then counted from today).
	NoQuestionDate bool
	// Prepare runs on each rendered memory file before mining (e.g.
	// condensation); not with AsSessions.
	Prepare  func(ctx context.Context, agent string) error
	Progress func(done, total int)
}

// Metrics is one mode's result, in the shape shared/bench/README.md fixes.
type Metrics struct {
	SessionRecall5      float64             `json:"session_recall@5"`
	SessionRecall10     float64             `json:"session_recall@10"`
	SessionRecall10Cat  float64             `json:"session_recall@10_cat1_4"`
	TurnRecall5         float64             `json:"turn_recall@5"`
	TurnRecall10        float64             `json:"turn_recall@10"`
	MRR                 float64             `json:"mrr"`
	WordsPerDrawer      float64             `json:"words_per_drawer"`
	LatencyP50          float64             `json:"latency_ms_p50"`
	LatencyP95          float64             `json:"latency_ms_p95"`
	ByCategory          map[string]Category `json:"by_category"`
	Questions           int                 `json:"questions"`
	UnresolvedEvidences int                 `json:"unresolved_evidence"`
	// PerQuestion is each question's evidence sessions' ranks, in the
	// order asked, so that two runs can be compared on any subset of the
	// questions (a half to choose on, the other held out).
	PerQuestion []QuestionRanks `json:"per_question"`
}

// QuestionRanks is one question's result: the rank (1-based) of each of
// its evidence sessions, in session order, among the sessions its hits
// rank; 0 for one not reached. A question with no evidence has none.
type QuestionRanks struct {
	Sample   string `json:"sample"`
	Index    int    `json:"index"` // the question's place in its conversation's qa list
	Category int    `json:"category"`
	Ranks    []int  `json:"evidence_session_ranks"`
}

// Category is the per-category breakdown.
type Category struct {
	Questions       int     `json:"questions"`
	SessionRecall5  float64 `json:"session_recall@5"`
	SessionRecall10 float64 `json:"session_recall@10"`
	TurnRecall10    float64 `json:"turn_recall@10"`
	MRR             float64 `json:"mrr"`
}

// Result is the whole run.
type Result struct {
	Dataset        string             `json:"dataset"`
	Conversations  int                `json:"conversations"`
	AsSessions     bool               `json:"as_sessions"`
	NoQuestionDate bool               `json:"no_question_date,omitempty"` // searched as of today (Options.NoQuestionDate)
	Questions      int                `json:"questions"`
	MineSeconds    float64            `json:"mine_seconds"`
	Drawers        int                `json:"drawers"`
	Modes          map[string]Metrics `json:"modes"`
}

// lineMaps maps each source file's lines to the dia ids on them. Drawers
// come from the memory file and, after condensation, from the archive
// files (and the condensed region) too, so every drawer's lines are mapped
// with its own source file, each read once.
type lineMaps struct {
	home  home.Home
	bySrc map[string]map[int]string
	// sessOf is each session file's session number (AsSessions).
	sessOf map[string]int
}

// of returns line → dia id for a drawer source (relative to the home). A
// source that cannot be read maps no lines; its drawers then count only
// through the session in their heading.
func (m *lineMaps) of(source string) map[int]string {
	if lines, ok := m.bySrc[source]; ok {
		return lines
	}
	data, err := os.ReadFile(m.home.Abs(source))
	var lines map[int]string
	if err == nil {
		lines = mapLines(data)
	}
	m.bySrc[source] = lines
	return lines
}

// Run renders, mines and queries every sample through p.
func Run(ctx context.Context, p *palace.Palace, samples []Sample, opts Options) (Result, error) {
	res := Result{Dataset: opts.Dataset, Conversations: len(samples), AsSessions: opts.AsSessions, NoQuestionDate: opts.NoQuestionDate, Modes: map[string]Metrics{}}
	if opts.AsSessions && opts.Prepare != nil {
		return res, errors.New("locomo: session files are not prepared (condensed) before mining")
	}
	modes := opts.Modes
	if len(modes) == 0 {
		modes = []string{palace.ModeLexical}
		if p.Embedder() != nil {
			modes = append(modes, palace.ModeVector, palace.ModeHybrid)
		}
	}
	maps := &lineMaps{home: p.Home(), bySrc: map[string]map[int]string{}, sessOf: map[string]int{}}
	room := "" // every drawer of the wing: the memory file's
	if opts.AsSessions {
		room = chunk.RoomSession
		secs, err := importSessions(ctx, p, samples, !opts.NoCaptions, maps)
		if err != nil {
			return res, err
		}
		res.MineSeconds = secs
	} else if err := writeAndMine(ctx, p, samples, opts, &res); err != nil {
		return res, err
	}

	words, drawers := 0, 0
	all, err := p.Store().List(ctx, store.Filter{Room: room}, 0)
	if err != nil {
		return res, err
	}
	for _, d := range all {
		words += len(strings.Fields(d.Text))
		drawers++
	}
	res.Drawers = drawers

	total := 0
	for _, s := range samples {
		n := len(s.QA)
		if opts.Limit > 0 && n > opts.Limit {
			n = opts.Limit
		}
		total += n
	}
	res.Questions = total
	done := 0
	for _, mode := range modes {
		var acc accum
		acc.init()
		for _, s := range samples {
			qs := s.QA
			if opts.Limit > 0 && len(qs) > opts.Limit {
				qs = qs[:opts.Limit]
			}
			asOf := s.AsOf()
			if opts.NoQuestionDate {
				asOf = ""
			}
			for i, q := range qs {
				t0 := time.Now()
				hits, err := p.Search(ctx, palace.Query{Text: q.Text, Mode: mode, Results: 50, AsOf: asOf, Filter: store.Filter{Wing: s.ID, Room: room}})
				lat := time.Since(t0)
				if errors.Is(err, palace.ErrNoWords) {
					err = nil // nothing a lexical search can look for: a miss
				}
				if err != nil {
					return res, fmt.Errorf("locomo %s %q: %w", s.ID, q.Text, err)
				}
				acc.add(QuestionRanks{Sample: s.ID, Index: i}, q, hits, maps, lat)
				done++
				if opts.Progress != nil {
					opts.Progress(done, total*len(modes))
				}
			}
		}
		m := acc.metrics()
		if drawers > 0 {
			m.WordsPerDrawer = float64(words) / float64(drawers)
		}
		res.Modes[mode] = m
	}
	return res, nil
}

// WriteMemory writes a conversation (Render) as its agent's memory file in
// h, a benchmark home, and returns the file's path.
func WriteMemory(h home.Home, s Sample, captions bool) (string, error) {
	data, _ := Render(s, captions)
	path, err := h.MemoryPath(s.ID)
	if err != nil {
		return "", fmt.Errorf("locomo: sample id %q is not a usable agent id: %w", s.ID, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("locomo: %w", err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return "", fmt.Errorf("locomo: %w", err)
	}
	return path, nil
}

// writeAndMine writes every conversation as its agent's memory file
// (Render), prepares it and mines the hive.
func writeAndMine(ctx context.Context, p *palace.Palace, samples []Sample, opts Options, res *Result) error {
	h := p.Home()
	for _, s := range samples {
		if _, err := WriteMemory(h, s, !opts.NoCaptions); err != nil {
			return err
		}
		if opts.Prepare != nil {
			if err := opts.Prepare(ctx, s.ID); err != nil {
				return fmt.Errorf("locomo: prepare %s: %w", s.ID, err)
			}
		}
	}
	start := time.Now()
	if _, err := p.Mine(ctx, h.HiveDir(), palace.MineOptions{}); err != nil {
		return fmt.Errorf("locomo: mine: %w", err)
	}
	res.MineSeconds = time.Since(start).Seconds()
	return nil
}

// mapLines recovers line → dia id from a rendered (possibly condensed) file.
func mapLines(data []byte) map[int]string {
	out := map[int]string{}
	for i, l := range strings.Split(string(data), "\n") {
		if m := evidenceRE.FindStringSubmatch(l); m != nil && strings.Contains(l[:min(len(l), 16)], "[D") {
			out[i+1] = "D" + m[1] + ":" + m[2]
		}
	}
	return out
}

type qscore struct {
	s5, s10, t5, t10, rr float64
}

type accum struct {
	per        []QuestionRanks
	all        []qscore
	cat        map[int][]qscore
	lat        []float64
	unresolved int
}

func (a *accum) init() { a.cat = map[int][]qscore{} }

// add scores one question (id: its sample and index). A drawer's turns are the dia ids on its lines
// (in its own source file); its session is the session of its first turn.
func (a *accum) add(id QuestionRanks, q Question, hits []palace.Hit, maps *lineMaps, lat time.Duration) {
	a.lat = append(a.lat, float64(lat.Microseconds())/1000)
	a.unresolved += len(q.Unresolved)
	evSess := map[int]bool{}
	evTurn := map[string]bool{}
	for _, e := range q.Evidence {
		evSess[SessionOf(e)] = true
		evTurn[e] = true
	}
	var sessRank []int
	seenSess := map[int]bool{}
	turnsAt := func(k int) map[string]bool {
		got := map[string]bool{}
		for i, h := range hits {
			if i >= k {
				break
			}
			lines := maps.of(h.Source)
			for l := h.LineStart; l <= h.LineEnd; l++ {
				if d, ok := lines[l]; ok {
					got[d] = true
				}
			}
		}
		return got
	}
	for _, h := range hits {
		sess := 0
		lines := maps.of(h.Source)
		for l := h.LineStart; l <= h.LineEnd && sess == 0; l++ {
			if d, ok := lines[l]; ok {
				sess = SessionOf(d)
			}
		}
		if sess == 0 {
			sess = maps.sessOf[h.Source]
		}
		if sess == 0 {
			sess = sessionFromHeading(h.Heading)
		}
		if sess > 0 && !seenSess[sess] {
			seenSess[sess] = true
			sessRank = append(sessRank, sess)
		}
	}
	recallS := func(k int) float64 {
		if len(evSess) == 0 {
			return 1
		}
		n := 0
		for i, s := range sessRank {
			if i >= k {
				break
			}
			if evSess[s] {
				n++
			}
		}
		return float64(n) / float64(len(evSess))
	}
	recallT := func(k int) float64 {
		if len(evTurn) == 0 {
			return 1
		}
		got := turnsAt(k)
		n := 0
		for e := range evTurn {
			if got[e] {
				n++
			}
		}
		return float64(n) / float64(len(evTurn))
	}
	rr := 0.0
	if len(evSess) == 0 {
		rr = 1
	}
	for i, s := range sessRank {
		if evSess[s] {
			rr = 1 / float64(i+1)
			break
		}
	}
	qs := qscore{s5: recallS(5), s10: recallS(10), t5: recallT(5), t10: recallT(10), rr: rr}
	a.all = append(a.all, qs)
	id.Category, id.Ranks = q.Category, evidenceRanks(evSess, sessRank)
	a.per = append(a.per, id)
	a.cat[q.Category] = append(a.cat[q.Category], qs)
}

// evidenceRanks is the rank (1-based) of each evidence session, in session
// order, in ranked; 0 for one not in it.
func evidenceRanks(ev map[int]bool, ranked []int) []int {
	out := make([]int, 0, len(ev))
	for _, s := range slices.Sorted(maps.Keys(ev)) {
		out = append(out, slices.Index(ranked, s)+1)
	}
	return out
}

var headingSessionRE = regexp.MustCompile(`session (\d+)`)

func sessionFromHeading(h string) int {
	if m := headingSessionRE.FindStringSubmatch(h); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

func mean(xs []qscore, f func(qscore) float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += f(x)
	}
	return s / float64(len(xs))
}

func (a *accum) metrics() Metrics {
	m := Metrics{ByCategory: map[string]Category{}, Questions: len(a.all), UnresolvedEvidences: a.unresolved, PerQuestion: a.per}
	m.SessionRecall5 = mean(a.all, func(q qscore) float64 { return q.s5 })
	m.SessionRecall10 = mean(a.all, func(q qscore) float64 { return q.s10 })
	m.TurnRecall5 = mean(a.all, func(q qscore) float64 { return q.t5 })
	m.TurnRecall10 = mean(a.all, func(q qscore) float64 { return q.t10 })
	m.MRR = mean(a.all, func(q qscore) float64 { return q.rr })
	var cat14 []qscore
	for c, qs := range a.cat {
		if c >= 1 && c <= 4 {
			cat14 = append(cat14, qs...)
		}
		m.ByCategory[strconv.Itoa(c)] = Category{
			Questions:       len(qs),
			SessionRecall5:  mean(qs, func(q qscore) float64 { return q.s5 }),
			SessionRecall10: mean(qs, func(q qscore) float64 { return q.s10 }),
			TurnRecall10:    mean(qs, func(q qscore) float64 { return q.t10 }),
			MRR:             mean(qs, func(q qscore) float64 { return q.rr }),
		}
	}
	m.SessionRecall10Cat = mean(cat14, func(q qscore) float64 { return q.s10 })
	m.LatencyP50, m.LatencyP95 = quantile.NearestRank(a.lat, 50), quantile.NearestRank(a.lat, 95)
	return m
}
