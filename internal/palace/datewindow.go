package palace

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/hivemem/hivemem/internal/rank"
	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/when"
)

// asOf is the moment a query is asked: its AsOf date, else now.
func (q Query) asOf() (time.Time, error) {
	if q.AsOf == "" {
		return time.Now(), nil
	}
	if err := store.CheckDate("as of", q.AsOf); err != nil {
		return time.Time{}, badQuery{err}
	}
	return time.Parse(time.DateOnly, q.AsOf)
}

// maxFetchDays is the widest window, slack included, that a query's time
// fetches candidates from (dateFetch): "yesterday", "last week", "in May
// 2023", "two months ago" (a month with its slack), "the past three
// months" (114 days) do; "last year", "in 2023", "the past six months" do
// not. A window that wide holds a large share of a hive's months, so its
// best matches are mostly the query's best anyway: fetching them costs
// each ranker a second search for little, and a time that vague says
// little about which drawers the query is after. The date stage
// (rank.BoostDateWindow) still lifts the candidates the rankers found there.
const maxFetchDays = 120

// minDatePool is the fewest candidates each ranker takes from inside a
// window: the pool a window is searched with is three times the results
// asked for, at least this, at most the query's own pool.
const minDatePool = 30

// dateFetch is what the times a query names add to its candidates: the
// query's filter narrowed to each window (slack included; overlapping ones
// merged), and how many candidates each ranker takes from each. A query
// is only a time (only) when each of its words belongs to one of the time
// expressions ("what did I do yesterday": stopwords aside, "yesterday");
// then the windows are its scope (see Palace.candidates).
type dateFetch struct {
	scopes  []store.Filter
	k       int
	only    bool
	windows []when.Window
}

// newDateFetch is the fetch of q's times ws (when.Find) for a query whose
// rankers take pool candidates each: none when ws holds no window of at
// most maxFetchDays inside q's own date bounds.
func newDateFetch(q Query, ws []when.Window, pool int) dateFetch {
	type span struct{ from, to string }
	var spans []span
	for _, w := range ws {
		from, to := w.From.AddDate(0, 0, -w.Slack), w.To.AddDate(0, 0, w.Slack)
		if to.Sub(from) >= maxFetchDays*24*time.Hour {
			continue
		}
		sp := span{from.Format(time.DateOnly), to.Format(time.DateOnly)}
		if q.Filter.Since > sp.from {
			sp.from = q.Filter.Since
		}
		if q.Filter.Until != "" && q.Filter.Until < sp.to {
			sp.to = q.Filter.Until
		}
		if sp.from <= sp.to {
			spans = append(spans, sp)
		}
	}
	if len(spans) == 0 {
		return dateFetch{}
	}
	slices.SortFunc(spans, func(a, b span) int { return strings.Compare(a.from, b.from) })
	df := dateFetch{k: min(pool, max(3*q.Results, minDatePool)), windows: ws}
	for i, sp := range spans {
		if n := len(df.scopes); i > 0 && sp.from <= df.scopes[n-1].Until {
			df.scopes[n-1].Until = max(df.scopes[n-1].Until, sp.to)
			continue
		}
		f := q.Filter
		f.Since, f.Until = sp.from, sp.to
		df.scopes = append(df.scopes, f)
	}
	df.only = timeOnly(q.Text, ws)
	if df.only {
		df.k = pool
	}
	return df
}

// timeOnly reports whether every word a lexical search would look for in
// text (store.QueryTerms) is a word of one of its time expressions ws.
func timeOnly(text string, ws []when.Window) bool {
	timeWords := map[string]bool{}
	for _, w := range ws {
		for _, t := range store.QueryTerms(w.Text) {
			timeWords[t] = true
		}
	}
	terms := store.QueryTerms(text)
	for _, t := range terms {
		if !timeWords[t] {
			return false
		}
	}
	return len(terms) > 0
}

// gather is one ranker's candidates: rank's best pool in f, then the best
// df.k of each of df's scopes not among them, best first — each drawer
// with the score it has for the query whatever the scope it was found in
// (BM25 and cosine depend on the drawer and the query alone; storetest
// holds every backend to it), so the lists stay one ranking. Should the
// first search come back with fewer than pool, it holds every candidate
// in scope, and no window can add one. A query that is only a time is
// ranked in df's scopes alone, pool in each. dated is the ids the scopes
// gave (those of a query that is only a time aside: every one is).
func (df dateFetch) gather(f store.Filter, pool int, rank func(store.Filter, int) ([]store.Scored, error)) (out []store.Scored, dated []string, err error) {
	if !df.only {
		res, err := rank(f, pool)
		if err != nil || len(res) < pool || len(df.scopes) == 0 {
			return res, nil, err
		}
		out = res
	}
	seen := make(map[string]bool, len(out))
	for _, s := range out {
		seen[s.ID] = true
	}
	var more []store.Scored
	for _, sc := range df.scopes {
		res, err := rank(sc, df.k)
		if err != nil {
			return nil, nil, err
		}
		for _, s := range res {
			if !df.only {
				dated = append(dated, s.ID)
			}
			if !seen[s.ID] {
				seen[s.ID] = true
				more = append(more, s)
			}
		}
	}
	// Below every drawer of out (they were not among its best), and in
	// the order the backends rank: by score, ties by id.
	slices.SortStableFunc(more, func(a, b store.Scored) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.ID, b.ID))
	})
	out = append(out, more...)
	for i := range out {
		out[i].Rank = i + 1
	}
	return out, dated, nil
}

// datedLexical is the lexical side of a query that is only a time, in
// scope f (one of its windows): its words are the time's, and a drawer
// that says "yesterday" is not what "what did I do yesterday" is after.
// A hybrid (or vector) search ranks by the vector side alone there; a
// lexical one, which has nothing else, takes the drawers in f (at most k,
// in file order), each scored by how well its date fits ws.
func (p *Palace) datedLexical(ctx context.Context, mode string, f store.Filter, k int, ws []when.Window) ([]store.Scored, error) {
	if mode != ModeLexical {
		return nil, nil
	}
	ds, err := p.store.List(ctx, f, k)
	if err != nil {
		return nil, err
	}
	out := make([]store.Scored, 0, len(ds))
	for _, d := range ds {
		if fit := rank.DateFit(ws, d.Date); fit > 0 {
			out = append(out, store.Scored{ID: d.ID, Score: fit})
		}
	}
	return out, nil
}
