package longmemeval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hivemem/hivemem/internal/capture"
	"github.com/hivemem/hivemem/internal/chunk"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/quantile"
	"github.com/hivemem/hivemem/internal/store"
)

// Ks are the cut-offs recall is reported at.
var Ks = []int{1, 3, 5, 10}

// Phases reported to Options.Progress.
const (
	PhaseMine  = "mining"
	PhaseQuery = "querying"
)

// DefaultResults is how many hits each question asks for: a session is a
// drawer or more per exchange, so enough for ten sessions.
const DefaultResults = 400

// DefaultEmbedSample is how many texts the embedder alone is timed on.
const DefaultEmbedSample = 500

// embedBatch is the batch the embedder alone is timed with: the palace's
// default mining batch.
const embedBatch = 32

// Options configures a run.
type Options struct {
	Modes          []string // default: lexical, vector, hybrid (vector/hybrid only with an embedder)
	Dataset        string
	AssistantTurns bool // import assistant turns too (otherwise they are left out before the import)
	// NoQuestionDate searches as of today instead of each question's
	// question_date (an ablation: a time the question names, "a week
	// ago", is then counted from today).
	NoQuestionDate bool
	// Results is how many hits each question asks for (0 = DefaultResults).
	Results int
	// EmbedSample is how many of the texts the mine embedded the embedder
	// alone is timed on, spread over the files (0 = DefaultEmbedSample,
	// < 0 = not timed).
	EmbedSample int
	// Progress reports each phase's progress: mining (files) and querying
	// (questions, over all modes).
	Progress func(phase string, done, total int)
}

// Scores are the ranking figures over a set of questions. Sessions are
// ranked by their best drawer; recall_any@k is 1 when any answer session is
// in the top k, recall_all@k when all are; NDCG@10 has binary gains and its
// ideal over all answer sessions; MRR is of the first answer session.
type Scores struct {
	Questions   int     `json:"questions"`
	RecallAny1  float64 `json:"recall_any@1"`
	RecallAny3  float64 `json:"recall_any@3"`
	RecallAny5  float64 `json:"recall_any@5"`
	RecallAny10 float64 `json:"recall_any@10"`
	RecallAll1  float64 `json:"recall_all@1"`
	RecallAll3  float64 `json:"recall_all@3"`
	RecallAll5  float64 `json:"recall_all@5"`
	RecallAll10 float64 `json:"recall_all@10"`
	NDCG10      float64 `json:"ndcg@10"`
	MRR         float64 `json:"mrr"`
}

// Metrics is one mode's result: the scores over every question, and the
// views published figures use.
type Metrics struct {
	Scores
	// NoAbstention leaves out the abstention ("_abs") questions.
	NoAbstention Scores `json:"no_abstention"`
	// Paper is the LongMemEval paper's retrieval view (its n = 419 on the
	// full set): abstention and single-session-assistant questions (whose
	// evidence is in assistant turns) left out.
	Paper          Scores            `json:"paper"`
	ByType         map[string]Scores `json:"by_type"`
	WordsPerDrawer float64           `json:"words_per_drawer"`
	LatencyP50     float64           `json:"latency_ms_p50"`
	LatencyP95     float64           `json:"latency_ms_p95"`
	// PerQuestion is each question's answer sessions' ranks, in the order
	// run, so that runs can be compared on any subset of the questions
	// (such as those a ranking was not tuned on).
	PerQuestion []QuestionRanks `json:"per_question"`
}

// QuestionRanks is one question's result: the rank (1-based) of each of its
// answer sessions among the sessions ranked, 0 for one not reached.
type QuestionRanks struct {
	ID    string `json:"id"`
	Type  string `json:"type"`
	Ranks []int  `json:"answer_ranks"`
}

// Result is the whole run.
type Result struct {
	Dataset          string  `json:"dataset"`
	Questions        int     `json:"questions"`
	Abstention       int     `json:"abstention_questions"`
	AssistantTurns   bool    `json:"assistant_turns"`
	NoQuestionDate   bool    `json:"no_question_date,omitempty"`
	Sessions         int     `json:"sessions"`
	RepeatedSessions int     `json:"repeated_sessions"`
	DistinctSessions int     `json:"distinct_sessions"`
	Drawers          int     `json:"drawers"`
	MineSeconds      float64 `json:"mine_seconds"`
	Embedded         int     `json:"embedded"`
	EmbedCacheHits   int     `json:"embed_cache_hits"`
	// Tokens estimates (chunk.EstimateTokens) the distinct drawer texts
	// the embedder sees.
	Tokens int `json:"tokens"`
	// MineTokensPerSecond is the tokens of the texts the mine embedded
	// over the mine's time; 0 when it embedded nothing (a kept home mined
	// before).
	MineTokensPerSecond float64 `json:"mine_tokens_per_second"`
	// The embedder alone, timed after each file's mine on a share of the
	// texts it embedded (EmbedSample in all), in the palace's batches.
	EmbedderTokensPerSecond float64            `json:"embedder_tokens_per_second"`
	EmbedderSampleTexts     int                `json:"embedder_sample_texts"`
	EmbedderSampleTokens    int                `json:"embedder_sample_tokens"`
	Modes                   map[string]Metrics `json:"modes"`
}

// PaperView reports whether a question counts in the paper's retrieval view.
func PaperView(q Question) bool {
	return !q.Abstention() && q.Type != "single-session-assistant"
}

// Run imports (capture.Import, format generic: which mines), and queries
// every question through p.
func Run(ctx context.Context, p *palace.Palace, qs []Question, opts Options) (Result, error) {
	res := Result{Dataset: opts.Dataset, Questions: len(qs), AssistantTurns: opts.AssistantTurns, NoQuestionDate: opts.NoQuestionDate, Modes: map[string]Metrics{}}
	modes := opts.Modes
	if len(modes) == 0 {
		modes = []string{palace.ModeLexical}
		if p.Embedder() != nil {
			modes = append(modes, palace.ModeVector, palace.ModeHybrid)
		}
	}
	progress := opts.Progress
	if progress == nil {
		progress = func(string, int, int) {}
	}
	h := p.Home()
	tmp, err := os.MkdirTemp("", "hivemem-longmemeval-input-")
	if err != nil {
		return res, fmt.Errorf("longmemeval: %w", err)
	}
	defer os.RemoveAll(tmp)
	distinct := map[string]bool{}
	inputs := make([]string, len(qs))
	for i, q := range qs {
		if q.Abstention() {
			res.Abstention++
		}
		res.RepeatedSessions += q.Repeated
		res.Sessions += len(q.Sessions)
		aliases := map[string]string{}
		for _, s := range q.Sessions {
			a := Alias(s.ID)
			if prev, ok := aliases[a]; ok {
				return res, fmt.Errorf("longmemeval %s: sessions %q and %q have the same alias %s", q.ID, prev, s.ID, a)
			}
			aliases[a] = s.ID
			distinct[a] = true
		}
		if _, err := h.SessionsDir(q.ID); err != nil {
			return res, fmt.Errorf("longmemeval: question id %q is not a usable agent id: %w", q.ID, err)
		}
		data, err := GenericInput(q, opts.AssistantTurns)
		if err != nil {
			return res, fmt.Errorf("longmemeval %s: %w", q.ID, err)
		}
		inputs[i] = filepath.Join(tmp, fmt.Sprintf("%d.jsonl", i))
		if err := os.WriteFile(inputs[i], data, 0o600); err != nil {
			return res, fmt.Errorf("longmemeval %s: %w", q.ID, err)
		}
	}
	res.DistinctSessions = len(distinct)

	// Each haystack is imported (and so mined) as its question's agent;
	// only this run's agents are counted: a kept home may hold other
	// questions from an earlier run. After each import the embedder alone
	// is timed on a share of the texts the mine embedded, so both figures
	// are taken under the same load on a shared machine.
	emb := p.Embedder()
	sample := opts.EmbedSample
	if sample == 0 {
		sample = DefaultEmbedSample
	}
	perFile := 0
	if emb != nil && sample > 0 {
		perFile = (sample + len(qs) - 1) / len(qs)
	}
	words, mineTokens := 0, 0
	var embSecs float64
	seen := map[string]bool{}
	sessionOf := make([]map[string]string, len(qs)) // per question: session file (home-relative) → session id
	miner := &timedMiner{p: p}
	progress(PhaseMine, 0, len(qs))
	for i, q := range qs {
		miner.secs = 0
		imp, files, err := ImportGeneric(ctx, h, miner, q.ID, inputs[i], q.Sessions)
		if err != nil {
			return res, fmt.Errorf("longmemeval %s: %w", q.ID, err)
		}
		os.Remove(inputs[i])
		res.MineSeconds += miner.secs
		res.Embedded += imp.Mine.Embedded
		res.EmbedCacheHits += imp.Mine.CacheHits
		sessionOf[i] = map[string]string{}
		for id, fs := range files {
			for _, f := range fs {
				sessionOf[i][f] = id
			}
		}
		ds, err := p.Store().List(ctx, store.Filter{Wing: q.ID, Room: chunk.RoomSession}, 0)
		if err != nil {
			return res, err
		}
		var fresh []string // distinct texts first seen in this file
		for _, d := range ds {
			if _, ok := sessionOf[i][d.Source]; !ok {
				continue // another run's session of this agent
			}
			res.Drawers++
			words += len(strings.Fields(d.Text))
			if seen[d.Hash] {
				continue
			}
			seen[d.Hash] = true
			t := chunk.Chunk{Heading: d.Heading, Text: d.Text}.EmbedText()
			n := chunk.EstimateTokens(t)
			res.Tokens += n
			if imp.Mine.Embedded > 0 {
				mineTokens += n
				fresh = append(fresh, t)
			}
		}
		if perFile > 0 && len(fresh) > 0 {
			share := fresh
			if perFile < len(fresh) {
				share = make([]string, 0, perFile)
				for j := range perFile {
					share = append(share, fresh[j*len(fresh)/perFile])
				}
			}
			secs, tokens, err := timeEmbedder(ctx, emb, share)
			if err != nil {
				return res, fmt.Errorf("longmemeval: embedder throughput: %w", err)
			}
			embSecs += secs
			res.EmbedderSampleTexts += len(share)
			res.EmbedderSampleTokens += tokens
		}
		progress(PhaseMine, i+1, len(qs))
	}
	if mineTokens > 0 && res.MineSeconds > 0 {
		res.MineTokensPerSecond = float64(mineTokens) / res.MineSeconds
	}
	if embSecs > 0 {
		res.EmbedderTokensPerSecond = float64(res.EmbedderSampleTokens) / embSecs
	}

	results := opts.Results
	if results == 0 {
		results = DefaultResults
	}
	done, total := 0, len(qs)*len(modes)
	progress(PhaseQuery, 0, total)
	for _, mode := range modes {
		var acc accum
		for i, q := range qs {
			asOf := q.AsOf
			if opts.NoQuestionDate {
				asOf = ""
			}
			t0 := time.Now()
			hits, err := p.Search(ctx, palace.Query{Text: q.Text, Mode: mode, Results: results, AsOf: asOf,
				Filter: store.Filter{Wing: q.ID, Room: chunk.RoomSession}})
			lat := time.Since(t0)
			if errors.Is(err, palace.ErrNoWords) {
				err = nil // nothing a lexical search can look for: a miss
			}
			if err != nil {
				return res, fmt.Errorf("longmemeval %s %q: %w", q.ID, q.Text, err)
			}
			acc.add(q, rankSessions(hits, sessionOf[i]), lat)
			done++
			progress(PhaseQuery, done, total)
		}
		m := acc.metrics()
		if res.Drawers > 0 {
			m.WordsPerDrawer = float64(words) / float64(res.Drawers)
		}
		res.Modes[mode] = m
	}
	return res, nil
}

// ImportGeneric imports input (GenericInput of sessions) as agent's
// session files through capture's generic importer, which mines them with
// m, and returns the import and each session's files (home-relative, first
// part to last) by session id. A mine that failed is an error here: a
// benchmark must not score a palace that is behind its files.
func ImportGeneric(ctx context.Context, h home.Home, m palace.Miner, agent, input string, sessions []Session) (capture.Result, map[string][]string, error) {
	imp, err := capture.Import(ctx, h, m, []string{input}, capture.Options{Agent: agent, Format: "generic"})
	if err == nil {
		err = imp.MineErr
	}
	if err != nil {
		return imp, nil, err
	}
	ids := map[string]string{}
	for _, s := range sessions {
		ids[Alias(s.ID)] = s.ID
	}
	files := map[string][]string{}
	for _, sr := range imp.Sessions {
		id, ok := ids[sr.Conversation]
		if !ok {
			return imp, nil, fmt.Errorf("the import gave a conversation %q that is none of the sessions given", sr.Conversation)
		}
		for _, f := range sr.Files() {
			files[id] = append(files[id], h.Rel(f))
		}
	}
	return imp, files, nil
}

// timedMiner is the palace as capture.Import's miner, adding up the time
// its mines take.
type timedMiner struct {
	p    *palace.Palace
	secs float64
}

func (m *timedMiner) Mine(ctx context.Context, path string, opts palace.MineOptions) (palace.MineReport, error) {
	t0 := time.Now()
	rep, err := m.p.Mine(ctx, path, opts)
	m.secs += time.Since(t0).Seconds()
	return rep, err
}

// genericLine is one message of capture's generic format.
type genericLine struct {
	Role      string `json:"role"`
	Content   string `json:"content"`
	Timestamp string `json:"timestamp,omitempty"`
	Session   string `json:"session"`
}

// GenericInput is a question's haystack as input for capture's generic
// format (JSON lines): one message per kept turn (user turns, and the
// assistant's too with assistantTurns) stamped with its session's date and
// naming its session by Alias, never by the data's id. Turns with no text
// are left out, and with them a session that has no other.
func GenericInput(q Question, assistantTurns bool) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, s := range q.Sessions {
		a := Alias(s.ID)
		for _, t := range s.Turns {
			if t.Role != "user" && !assistantTurns || strings.TrimSpace(t.Text) == "" {
				continue
			}
			if err := enc.Encode(genericLine{Role: t.Role, Content: t.Text, Timestamp: s.Date, Session: a}); err != nil {
				return nil, fmt.Errorf("session %s: %w", s.ID, err)
			}
		}
	}
	return b.Bytes(), nil
}

// timeEmbedder times the embedder alone on texts, in the palace's
// batches, and returns the seconds and the (estimated) tokens embedded.
func timeEmbedder(ctx context.Context, emb palace.Embedder, texts []string) (float64, int, error) {
	tokens := 0
	for _, t := range texts {
		tokens += chunk.EstimateTokens(t)
	}
	start := time.Now()
	for i := 0; i < len(texts); i += embedBatch {
		if _, err := emb.Embed(ctx, texts[i:min(i+embedBatch, len(texts))]); err != nil {
			return 0, 0, err
		}
	}
	return time.Since(start).Seconds(), tokens, nil
}

// rankSessions turns hits into the haystack's session ids, each at the rank
// of its best drawer, by the session file (source) the drawer is in. Hits
// in no session file of the haystack are passed over.
func rankSessions(hits []palace.Hit, sessionOf map[string]string) []string {
	var out []string
	seen := map[string]bool{}
	for _, h := range hits {
		id, ok := sessionOf[h.Source]
		if !ok || seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, id)
	}
	return out
}

type qscore struct {
	any, all [4]float64 // at Ks
	ndcg, rr float64
}

// score ranks one question's sessions against its answer sessions. A
// question without answer sessions scores 1 throughout, as in LoCoMo.
func score(ranked, answers []string) qscore {
	var s qscore
	want := map[string]bool{}
	for _, a := range answers {
		want[a] = true
	}
	if len(want) == 0 {
		s.ndcg, s.rr = 1, 1
		for i := range Ks {
			s.any[i], s.all[i] = 1, 1
		}
		return s
	}
	for i, k := range Ks {
		n := 0
		for _, id := range ranked[:min(k, len(ranked))] {
			if want[id] {
				n++
			}
		}
		if n > 0 {
			s.any[i] = 1
		}
		if n == len(want) {
			s.all[i] = 1
		}
	}
	dcg, ideal := 0.0, 0.0
	for i := range min(10, len(want)) {
		ideal += 1 / math.Log2(float64(i+2))
	}
	for i, id := range ranked[:min(10, len(ranked))] {
		if want[id] {
			dcg += 1 / math.Log2(float64(i+2))
		}
	}
	s.ndcg = dcg / ideal
	for i, id := range ranked {
		if want[id] {
			s.rr = 1 / float64(i+1)
			break
		}
	}
	return s
}

type scored struct {
	q     Question
	s     qscore
	ranks []int // of q.Answers
}

type accum struct {
	all []scored
	lat []float64
}

func (a *accum) add(q Question, ranked []string, lat time.Duration) {
	a.lat = append(a.lat, float64(lat.Microseconds())/1000)
	at := map[string]int{}
	for i, id := range ranked {
		at[id] = i + 1
	}
	ranks := make([]int, len(q.Answers))
	for i, id := range q.Answers {
		ranks[i] = at[id]
	}
	a.all = append(a.all, scored{q, score(ranked, q.Answers), ranks})
}

func summarise(xs []scored, keep func(Question) bool) Scores {
	var out Scores
	var sum qscore
	for _, x := range xs {
		if !keep(x.q) {
			continue
		}
		out.Questions++
		for i := range Ks {
			sum.any[i] += x.s.any[i]
			sum.all[i] += x.s.all[i]
		}
		sum.ndcg += x.s.ndcg
		sum.rr += x.s.rr
	}
	if out.Questions == 0 {
		return out
	}
	n := float64(out.Questions)
	out.RecallAny1, out.RecallAny3, out.RecallAny5, out.RecallAny10 = sum.any[0]/n, sum.any[1]/n, sum.any[2]/n, sum.any[3]/n
	out.RecallAll1, out.RecallAll3, out.RecallAll5, out.RecallAll10 = sum.all[0]/n, sum.all[1]/n, sum.all[2]/n, sum.all[3]/n
	out.NDCG10, out.MRR = sum.ndcg/n, sum.rr/n
	return out
}

func (a *accum) metrics() Metrics {
	m := Metrics{
		Scores:       summarise(a.all, func(Question) bool { return true }),
		NoAbstention: summarise(a.all, func(q Question) bool { return !q.Abstention() }),
		Paper:        summarise(a.all, PaperView),
		ByType:       map[string]Scores{},
	}
	for _, x := range a.all {
		m.PerQuestion = append(m.PerQuestion, QuestionRanks{ID: x.q.ID, Type: x.q.Type, Ranks: x.ranks})
		if _, ok := m.ByType[x.q.Type]; !ok {
			t := x.q.Type
			m.ByType[t] = summarise(a.all, func(q Question) bool { return q.Type == t })
		}
	}
	m.LatencyP50, m.LatencyP95 = quantile.NearestRank(a.lat, 50), quantile.NearestRank(a.lat, 95)
	return m
}
