package palace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/hivemem/hivemem/internal/chunk"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/rank"
	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/when"
)

// Search modes.
const (
	ModeHybrid  = "hybrid"
	ModeLexical = "lexical"
	ModeVector  = "vector"
)

// MaxQueryBytes caps a query; longer text is refused rather than silently cut.
const MaxQueryBytes = 4096

// MaxResults caps how many hits one search returns.
const MaxResults = 1000

// Query is one search.
type Query struct {
	Text    string
	Filter  store.Filter
	Results int    // 1 to MaxResults; 0 means 5
	Mode    string // hybrid (default), lexical, vector
	// IncludeSuperseded keeps drawers of sections marked as replaced by a
	// later one (store.Drawer.SupersededBy), which search leaves out.
	IncludeSuperseded bool
	// AsOf (YYYY-MM-DD) is the day the query is asked, which a time it
	// names ("last week", "two months ago") is counted from: drawers
	// dated then rank higher (rank.BoostDateWindow). "" is today.
	AsOf string
}

// ErrNoWords is returned for a lexical search whose query has no word to
// look for (only punctuation or symbols, such as "*" or "()"): it could
// never match anything.
var ErrNoWords = errors.New("query has no words to search for")

// ErrUnknownWing is returned for a search filtered to a wing the palace
// does not have.
var ErrUnknownWing = errors.New("unknown wing")

// ErrUnknownAgent is returned for a search filtered to an agent the home
// and the palace do not know.
var ErrUnknownAgent = errors.New("unknown agent")

// ErrUnknownRoom is returned for a search filtered to a room no drawer
// has.
var ErrUnknownRoom = errors.New("unknown room")

// Hit is one search result with every score that produced it.
type Hit struct {
	ID           string  `json:"id" jsonschema:"drawer id"`
	Wing         string  `json:"wing"`
	Room         string  `json:"room"`
	Agent        string  `json:"agent"`
	Source       string  `json:"source" jsonschema:"file the text comes from, relative to the hivemem home"`
	Heading      string  `json:"heading" jsonschema:"the section heading; pass it to memory_read as section to read the whole section"`
	LineStart    int     `json:"line_start"`
	LineEnd      int     `json:"line_end"`
	Date         string  `json:"date,omitempty"`
	Text         string  `json:"text"`
	Score        float64 `json:"score"`
	LexicalScore float64 `json:"lexical_score"`
	LexicalRank  int     `json:"lexical_rank,omitempty"`
	VectorScore  float64 `json:"vector_score"`
	VectorRank   int     `json:"vector_rank,omitempty"`
	// SupersededBy is the drawer that states this hit's subject anew,
	// and SupersededReason why: SupersededNewer or SupersededExplicit.
	SupersededBy     string `json:"superseded_by,omitempty" jsonschema:"id of the drawer that supersedes this one: what this hit says is no longer current"`
	SupersededReason string `json:"superseded_reason,omitempty" jsonschema:"newer (a later dated section states the same subject) or explicit (the agent said so)"`
}

// plainText reports whether s is valid UTF-8 without NUL bytes, as every
// path and label in the index is (PostgreSQL can store nothing else).
func plainText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// roomRE is what a room name looks like (pinned, condensed, recent,
// archive, header, or a room given to mined files).
var roomRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// Fusion methods (Options.Fusion): rank.FusionScore, rank.FusionRRF.
const (
	FusionScore = rank.FusionScore
	FusionRRF   = rank.FusionRRF
)

// ErrBadQuery is wrapped by every error of Query.Validate (and by
// Search's refusal of a mode the palace cannot do): the caller asked for
// something malformed, as opposed to the palace failing.
var ErrBadQuery = errors.New("bad query")

// BadQuery marks err as a malformed request (errors.Is(_, ErrBadQuery)),
// keeping its message as it is.
func BadQuery(err error) error { return badQuery{err} }

// badQuery is a validation error: its message is the problem alone.
type badQuery struct{ err error }

func (b badQuery) Error() string        { return b.err.Error() }
func (b badQuery) Unwrap() error        { return b.err }
func (b badQuery) Is(target error) bool { return target == ErrBadQuery }

// Validate checks a query once for every front end: the text (UTF-8, at
// most MaxQueryBytes, not blank), the number of results (0 means the
// default; else 1 to maxResults, itself at most MaxResults), the mode
// name, each filter (wing, room, agent id, dates in order) and the as-of
// date. Every error wraps ErrBadQuery; a blank text also wraps
// ErrEmptyQuery.
func (q Query) Validate(maxResults int) error {
	if maxResults <= 0 || maxResults > MaxResults {
		maxResults = MaxResults
	}
	bad := func(format string, args ...any) error { return badQuery{fmt.Errorf(format, args...)} }
	f := q.Filter
	switch {
	case !utf8.ValidString(q.Text):
		return bad("query is not valid UTF-8")
	case len(q.Text) > MaxQueryBytes:
		return bad("query is %d bytes, at most %d allowed", len(q.Text), MaxQueryBytes)
	case strings.TrimSpace(strings.ReplaceAll(q.Text, "\x00", "")) == "":
		return badQuery{ErrEmptyQuery}
	case q.Results != 0 && (q.Results < 1 || q.Results > maxResults):
		return badQuery{ValidateResults(q.Results, maxResults)}
	}
	switch q.Mode {
	case "", ModeHybrid, ModeLexical, ModeVector:
	default:
		return bad("unknown mode %q (want hybrid, lexical or vector)", q.Mode)
	}
	if err := memfile.CheckText("wing", f.Wing, memfile.MaxNameBytes); err != nil {
		return badQuery{err}
	}
	if err := memfile.CheckText("room", f.Room, memfile.MaxNameBytes); err != nil {
		return badQuery{err}
	}
	if f.Room != "" && !roomRE.MatchString(f.Room) {
		return bad("unknown room %q: want a room name such as pinned, condensed, recent, archive, session", f.Room)
	}
	if f.Agent != "" {
		if err := home.ValidateAgentID(f.Agent); err != nil {
			return bad("agent: %w", err)
		}
	}
	if err := f.Validate(); err != nil { // since and until
		return badQuery{err}
	}
	if f.Since != "" && f.Until != "" && f.Since > f.Until {
		return bad("since %s is after until %s: no date is in that range", f.Since, f.Until)
	}
	if err := store.CheckDate("as of", q.AsOf); err != nil {
		return badQuery{err}
	}
	return nil
}

// ValidateResults accepts a number of hits from 1 to limit (at most
// MaxResults; 0: MaxResults), with the one message every front end gives.
func ValidateResults(n, limit int) error {
	if limit <= 0 || limit > MaxResults {
		limit = MaxResults
	}
	if n < 1 || n > limit {
		return fmt.Errorf("results must be between 1 and %d, got %d", limit, n)
	}
	return nil
}

// Mode reports what Search can do: hybrid with an embedder, else lexical.
func (p *Palace) Mode() string {
	if p.emb == nil {
		return ModeLexical
	}
	return ModeHybrid
}

// Search ranks drawers for a plain-text query. Hybrid search takes the BM25
// candidates and the exact cosine ranking over every drawer in scope and
// fuses them (by score, or by reciprocal rank with FusionRRF); without an
// embedder it is lexical-only.
// Query text is data: it is never interpreted as FTS or SQL syntax.
func (p *Palace) Search(ctx context.Context, q Query) ([]Hit, error) {
	if err := q.Validate(MaxResults); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	if q.Results == 0 {
		q.Results = 5
	}
	sq, err := store.Analyze(q.Text, q.Filter) // the words; dates are valid (Validate)
	if err != nil {
		return nil, fmt.Errorf("search: %w", badQuery{err})
	}
	mode := q.Mode
	if mode == "" {
		mode = p.Mode()
	}
	if mode != ModeLexical && p.emb == nil {
		if mode == ModeVector {
			return nil, fmt.Errorf("search: %w", badQuery{errors.New("vector mode needs an embedding model: this palace is lexical-only (run `hivemem model fetch`)")})
		}
		mode = ModeLexical
	}
	// Lexical search looks only for words; the vector side of a hybrid
	// search can still answer a query without any.
	if mode == ModeLexical && sq.Terms == nil {
		return nil, fmt.Errorf("search: %w: %q has no letters or digits", ErrNoWords, q.Text)
	}
	pool := max(p.opts.CandidatePool, q.Results*3)
	ref, err := q.asOf()
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	times := when.Find(q.Text, ref) // read once, for the candidates, the date stage and supersession
	lex, vec, qvec, dated, err := p.candidates(ctx, q, mode, pool, newDateFetch(q, times, pool))
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	var fused []rank.Fused
	if p.opts.Fusion == FusionRRF {
		fused = rank.Fuse(lex, vec, p.opts.RRFK, p.opts.VectorWeight)
	} else {
		fused = rank.FuseScores(lex, vec, p.opts.VectorWeight)
	}
	// A few more than asked for, so that folding archive twins (below)
	// still leaves q.Results hits, and at least rank.SessionWindow, so
	// that a drawer's strongest neighbour in its conversation is seen
	// (rank.BoostSessions); and the candidates found inside the windows of
	// the time the query names, for the date stage (rank.BoostDateWindow).
	fused, window := rank.WithDated(fused, max(q.Results*2+10, rank.SessionWindow), dated)
	byID, fused, err := p.getCurrent(ctx, fused, window, q.IncludeSuperseded)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	var ranked []rank.Ranked
	for _, f := range fused {
		if d, ok := byID[f.ID]; ok { // else removed between ranking and fetching
			ranked = append(ranked, rank.Ranked{Drawer: d, Fused: f})
		}
	}
	ranked = rank.BoostSessions(ranked, rank.SessionWeight)
	// The conversation bonus is on score fusion's scale (0 to 1+w); RRF's
	// scores are a hundredth of that, where it would drown the ranking.
	if qvec != nil && p.opts.Fusion != FusionRRF {
		if ranked, err = p.sessionVectors(ctx, qvec, ranked, rank.SessionVectorWeight); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
	}
	ranked = rank.BoostDateWindow(ranked, times, rank.DateWeight)
	ranked = rank.FoldArchiveTwins(ranked)
	past := rank.AsksAboutPast(q.Text, times, ref)
	ranked, marks := rank.Supersede(q.Text, q.AsOf, ranked, past, func(top []rank.Ranked) [][]float32 {
		return p.candidateVectors(ctx, top)
	})
	if len(ranked) > q.Results {
		ranked = ranked[:q.Results]
	}
	hits := make([]Hit, 0, len(ranked))
	for _, r := range ranked {
		d, f := r.Drawer, r.Fused
		mark := marks[d.ID]
		// An explicit correction (a "> superseded by:" marker, kept in
		// the results only with IncludeSuperseded) outranks a guess.
		if d.SupersededBy != "" {
			mark.By, mark.Reason = d.SupersededBy, SupersededExplicit
		}
		hits = append(hits, Hit{
			ID: d.ID, Wing: d.Wing, Room: d.Room, Agent: d.Agent, Source: d.Source, Heading: d.Heading,
			LineStart: d.LineStart, LineEnd: d.LineEnd, Date: d.Date, Text: d.Text,
			Score: f.Score, LexicalScore: f.Lexical, LexicalRank: f.LexicalRank,
			VectorScore: f.Vector, VectorRank: f.VectorRank,
			SupersededBy: mark.By, SupersededReason: mark.Reason,
		})
	}
	if !past {
		hits = currentAbove(hits, q.AsOf)
	}
	// A hit proves its wing and room exist; only an empty result can hide
	// a mistyped one.
	if len(hits) == 0 && q.Filter.Wing != "" {
		if err := p.checkWing(ctx, q.Filter.Wing); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
	}
	if len(hits) == 0 && q.Filter.Agent != "" {
		if err := p.checkAgent(ctx, q.Filter.Agent); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
	}
	if len(hits) == 0 && q.Filter.Room != "" {
		if err := p.checkRoom(ctx, q.Filter.Room); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
	}
	return hits, nil
}

// checkRoom returns ErrUnknownRoom for a room no drawer has, as checkWing
// does for a wing. The rooms the miner assigns are always known, drawers
// or not (a file with no pinned facts yet).
func (p *Palace) checkRoom(ctx context.Context, room string) error {
	switch room {
	case chunk.RoomHeader, chunk.RoomPinned, chunk.RoomCondensed, chunk.RoomRecent, chunk.RoomArchive, chunk.RoomSession:
		return nil
	}
	if ok, err := p.hasDrawer(ctx, store.Filter{Room: room}); err != nil || ok {
		return err
	}
	return fmt.Errorf("%w %q: no drawer has it (rooms come from the sections: pinned, condensed, recent, archive, header; session for imported conversations; or from mine --room)", ErrUnknownRoom, room)
}

// hasDrawer reports whether any drawer matches f.
func (p *Palace) hasDrawer(ctx context.Context, f store.Filter) (bool, error) {
	ds, err := p.store.List(ctx, f, 1)
	return len(ds) > 0, err
}

// checkWing returns ErrUnknownWing for a wing the palace does not have.
// Wake-up knows a wing by the agent's memory file or a mined memory.md
// under it; a search also covers any mined file, so a wing is known when
// it is an agent with a memory file or the wing of any mined file.
func (p *Palace) checkWing(ctx context.Context, wing string) error {
	if path, err := p.home.MemoryPath(wing); err == nil {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
	}
	files, err := p.store.Files(ctx, "")
	if err != nil {
		return err
	}
	for _, f := range files {
		if f.Wing == wing {
			return nil
		}
	}
	return fmt.Errorf("%w %q: no agent or mined file has it", ErrUnknownWing, wing)
}

// checkAgent returns ErrUnknownAgent for an agent with neither a
// directory under hive/agents nor a drawer in the palace, so that a
// mistyped --agent is told apart from an agent with nothing on the
// subject.
func (p *Palace) checkAgent(ctx context.Context, id string) error {
	if dir, err := p.home.AgentDir(id); err == nil {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return nil
		}
	}
	if ok, err := p.hasDrawer(ctx, store.Filter{Agent: id}); err != nil || ok {
		return err
	}
	return fmt.Errorf("%w %q: no directory under hive/agents and no drawer has it", ErrUnknownAgent, id)
}

// candidates runs the rankers of mode for q: each ranker's best pool in
// the query's scope, and the best of each window of the time it names
// merged in (dateFetch.gather), whose ids are dated. A query that is only
// a time (dateFetch.only) is ranked inside its windows alone, and as an
// ordinary query should they hold nothing. qvec is the query's vector
// (nil in lexical mode).
func (p *Palace) candidates(ctx context.Context, q Query, mode string, pool int, df dateFetch) (lex, vec []store.Scored, qvec []float32, dated map[string]bool, err error) {
	rank := func(df dateFetch) error {
		var lexErr, vecErr error
		var lexDated, vecDated []string
		var wg sync.WaitGroup
		// The two rankers are independent: run them side by side.
		if mode != ModeVector {
			wg.Add(1)
			go func() {
				defer wg.Done()
				lex, lexDated, lexErr = df.gather(q.Filter, pool, func(f store.Filter, k int) ([]store.Scored, error) {
					if df.only {
						return p.datedLexical(ctx, mode, f, k, df.windows)
					}
					return p.store.Lexical(ctx, q.Text, f, k)
				})
			}()
		}
		if mode != ModeLexical {
			if qvec, vecErr = p.embedQuery(ctx, q.Text); vecErr == nil {
				vec, vecDated, vecErr = df.gather(q.Filter, pool, func(f store.Filter, k int) ([]store.Scored, error) {
					return p.store.Vector(ctx, qvec, f, k)
				})
			}
		}
		wg.Wait()
		dated = nil
		if len(lexDated)+len(vecDated) > 0 {
			dated = make(map[string]bool, len(lexDated)+len(vecDated))
		}
		for _, id := range append(lexDated, vecDated...) {
			dated[id] = true
		}
		return errors.Join(lexErr, vecErr)
	}
	if err := rank(df); err != nil {
		return nil, nil, nil, nil, err
	}
	if df.only && len(lex)+len(vec) == 0 {
		if err := rank(dateFetch{}); err != nil {
			return nil, nil, nil, nil, err
		}
	}
	return lex, vec, qvec, dated, nil
}

// embedQuery embeds a query, or takes its vector from the cache. The
// embedder is fixed for the palace's lifetime, so the text alone is the key.
// Cached vectors are shared: nothing downstream writes to a query vector.
func (p *Palace) embedQuery(ctx context.Context, text string) ([]float32, error) {
	if p.queries != nil {
		if v, ok := p.queries.Get(text); ok {
			return v, nil
		}
	}
	vs, err := p.embed(ctx, false, []string{text})
	if err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	if len(vs) != 1 {
		return nil, fmt.Errorf("embedder returned %d vectors for one query", len(vs))
	}
	if p.queries != nil {
		p.queries.Add(text, vs[0])
	}
	return vs[0], nil
}

// getCurrent fetches the drawers of the best window candidates by id,
// leaving out those marked superseded unless include (and taking the next
// candidates in their place). It returns them by id and the candidates
// looked at.
func (p *Palace) getCurrent(ctx context.Context, fused []rank.Fused, window int, include bool) (map[string]store.Drawer, []rank.Fused, error) {
	byID := map[string]store.Drawer{}
	next, kept := 0, 0
	for kept < window && next < len(fused) {
		end := min(len(fused), next+window-kept)
		ids := make([]string, 0, end-next)
		for _, f := range fused[next:end] {
			ids = append(ids, f.ID)
		}
		next = end
		ds, err := p.store.Get(ctx, ids)
		if err != nil {
			return nil, nil, err
		}
		for _, d := range ds {
			if include || d.SupersededBy == "" {
				byID[d.ID] = d
				kept++
			}
		}
	}
	return byID, fused[:next], nil
}
