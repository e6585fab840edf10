package rank

import (
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/hivemem/hivemem/internal/kernel"
	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/store/fts"
	"github.com/hivemem/hivemem/internal/when"
)

// Reasons a hit is superseded (Hit.SupersededReason).
const (
	// SupersededNewer: a later dated drawer of the same wing states the
	// same subject (found by ranking, see supersede).
	SupersededNewer = "newer"
	// SupersededExplicit: the agent wrote that a newer section replaces
	// this one.
	SupersededExplicit = "explicit"
)

// supersedeParams tunes supersession (see Supersede): how many of the
// top candidates are compared; how many key terms a pair must share and
// what makes a term key (held by fewer than keyFrac of the candidates);
// the share of the question's words, among those the best candidate
// holds, both of a pair must hold; how far above the median similarity
// to the other candidates a pair's own must be; and which similarities
// may show it: of the words of the lines that hold the question's terms,
// and of the drawers' vectors (when the palace has them).
type supersedeParams struct {
	window, minKeys        int
	keyFrac, share, margin float64
	words, vectors         bool
	// subjects: the similarity of words leaves out the words that name
	// a value (subjectCounts).
	subjects bool
}

// supersedeDefaults were measured on `hivemem bench updates`, LoCoMo and
// LongMemEval (README, "Benchmarks").
var supersedeDefaults = supersedeParams{window: 10, minKeys: 1, keyFrac: 0.5, share: 0.75, margin: 0.125, words: true, vectors: true, subjects: true}

// Supersession is why a hit ranks below a newer one.
type Supersession struct {
	By     string // the id of the newer drawer
	Reason string // SupersededNewer or SupersededExplicit
}

// Supersede is the stage after fusion that puts the newest statement of a
// subject first. Among the top candidates, two drawers of the same wing
// with different dates are about the same subject when they share the
// question's key terms and are far more similar to each other than to the
// rest; in each group of such drawers the newer take the better ranks
// (the group keeps its places, other hits do not move) and each older
// one is marked superseded by the newest drawer it pairs with.
//
// It is not a recency boost: a drawer that pairs with no other keeps its
// rank whatever its date, and a question about the past (it names a
// time over before the day it is asked, or asks what came before or
// first: past, AsksAboutPast) is answered in the order the rankers gave,
// the marks kept.
func Supersede(text, asOf string, rs []Ranked, past bool, vectors func(top []Ranked) [][]float32) ([]Ranked, map[string]Supersession) {
	cfg := supersedeDefaults
	n := min(len(rs), cfg.window)
	if n < 2 {
		return rs, nil
	}
	top := rs[:n]
	qterms := queryStems(text)
	if len(qterms) == 0 {
		return rs, nil
	}
	whole := make([]map[string]int, n)
	for i, r := range top {
		whole[i] = stemCounts(r.Drawer.Heading + "\n" + r.Drawer.Text)
	}
	// How many candidates hold each word; rarer words weigh more in the
	// similarity of key lines.
	df := map[string]int{}
	for _, d := range whole {
		for t := range d {
			df[t]++
		}
	}
	idf := func(t string) float64 { return math.Log(1 + float64(n)/float64(max(df[t], 1))) }
	keys := make([]map[string]int, n)
	subjects := make([]map[string]int, n) // keys less values
	qsorted := slices.Sorted(maps.Keys(qterms))
	for i, r := range top {
		var line string
		keys[i], line = keyLineText(r.Drawer, qsorted, idf)
		subjects[i] = subjectCounts(line)
	}
	// The most of the question's words one candidate's key line holds:
	// what a pair must share most of.
	found := 0
	for _, k := range keys {
		w := 0
		for t := range qterms {
			if k[t] > 0 {
				w++
			}
		}
		found = max(found, w)
	}
	if found == 0 {
		return rs, nil
	}
	// A key term is one of the question's words that fewer than keyFrac
	// of the candidates hold: a word most of them hold (the name of who
	// speaks on every line, or the word two sibling subjects share, as
	// "server" in "staging server" and "build server") tells no subject
	// apart. A word no more than two hold is always key (in a handful of
	// candidates, a pair is half of them).
	isKey := func(t string) bool { return df[t] <= 2 || float64(df[t]) < cfg.keyFrac*float64(n) }
	keyShare := func(i, j int) float64 {
		both, keysBoth := 0, 0
		for t := range qterms {
			if keys[i][t] > 0 && keys[j][t] > 0 {
				both++
				if isKey(t) {
					keysBoth++
				}
			}
		}
		if keysBoth < cfg.minKeys {
			return 0
		}
		return float64(both) / float64(found)
	}
	var wordSim, vecSim [][]float64
	if cfg.words {
		if cfg.subjects {
			wordSim = wordSimilarity(subjects, idf)
		} else {
			wordSim = wordSimilarity(keys, idf)
		}
	}
	if cfg.vectors {
		if vecs := candidateVectors(vectors, top); vecs != nil {
			vecSim = vectorSimilarity(vecs)
		}
	}
	related := make([][]bool, n)
	for i := range related {
		related[i] = make([]bool, n)
	}
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		if parent[i] != i {
			parent[i] = find(parent[i])
		}
		return parent[i]
	}
	// The values the question names (an identifier, a number, a name):
	// a drawer that holds one and a drawer that does not are what the
	// question tells apart, not one subject to put the newest of first.
	qvalues := queryValues(text)
	holds := make([]map[string]bool, n)
	for i, r := range top {
		holds[i] = map[string]bool{}
		for _, w := range textWords(r.Drawer.Text) {
			holds[i][w] = true
		}
	}
	namesOne := func(i, j int) bool {
		for _, v := range qvalues {
			if holds[i][v] != holds[j][v] {
				return true
			}
		}
		return false
	}
	paired := false
	for i := range n {
		for j := i + 1; j < n; j++ {
			a, b := top[i].Drawer, top[j].Drawer
			if a.Wing != b.Wing || a.Date == "" || b.Date == "" || a.Date == b.Date || namesOne(i, j) {
				continue
			}
			if keyShare(i, j) < cfg.share {
				continue
			}
			// Far more alike than either is to the rest, by the words
			// of their key lines or by their vectors.
			if !(wordSim != nil && standsOut(wordSim, i, j, cfg.margin)) && !(vecSim != nil && standsOut(vecSim, i, j, cfg.margin)) {
				continue
			}
			related[i][j], related[j][i] = true, true
			parent[find(i)] = find(j)
			paired = true
		}
	}
	if !paired {
		return rs, nil
	}
	marks := map[string]Supersession{}
	for i := range n {
		// The newest drawer i pairs with that is newer than i (and, for
		// a query asked as of a day, written by then).
		best := -1
		for j := range n {
			if related[i][j] && top[j].Drawer.Date > top[i].Drawer.Date && writtenBy(top[j].Drawer.Date, asOf) &&
				(best < 0 || top[j].Drawer.Date > top[best].Drawer.Date) {
				best = j
			}
		}
		if best >= 0 {
			marks[top[i].Drawer.ID] = Supersession{By: top[best].Drawer.ID, Reason: SupersededNewer}
		}
	}
	if past {
		return rs, marks
	}
	// Each group keeps its places; within it, newest first (equal dates
	// in the fused order).
	out := slices.Clone(rs)
	groups := map[int][]int{}
	for i := range n {
		groups[find(i)] = append(groups[find(i)], i)
	}
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		members := slices.Clone(g)
		// Newest first among those written by the day the query is asked
		// as of; any written after it (not yet true then) after them.
		slices.SortStableFunc(members, func(a, b int) int {
			da, db := top[a].Drawer.Date, top[b].Drawer.Date
			wa, wb := writtenBy(da, asOf), writtenBy(db, asOf)
			switch {
			case wa != wb && wa:
				return -1
			case wa != wb:
				return 1
			case !wa:
				return strings.Compare(da, db)
			}
			return strings.Compare(db, da)
		})
		for k, slot := range g {
			out[slot] = top[members[k]]
		}
	}
	return out, marks
}

// writtenBy reports whether a drawer dated date was written by the day
// asOf (YYYY-MM-DD; "" is today, by which everything was written).
func writtenBy(date, asOf string) bool {
	if asOf == "" || len(date) < len(asOf) {
		return true
	}
	return date[:len(asOf)] <= asOf
}

// Placed is what CurrentAbove reads of a hit: its id, the id of the hit
// that supersedes it ("" for none) and its date.
type Placed struct{ ID, SupersededBy, Date string }

// CurrentAbove moves every hit marked superseded that ranks above the hit
// superseding it to just below that hit, the others keeping their order:
// a hit the search marks superseded never ranks above its replacement
// (unless the question asks about the past, when the caller does not
// call it). A replacement written after asOf leaves the hit in place (at
// that day it was current). It returns the new order as indices into
// hits, nil when no hit moves.
func CurrentAbove(hits []Placed, asOf string) []int {
	at := map[string]int{}
	for i, h := range hits {
		at[h.ID] = i
	}
	// follows[j]: the hits that go right after hit j, in their order.
	follows := map[int][]int{}
	moved := make([]bool, len(hits))
	for i, h := range hits {
		if j, ok := at[h.SupersededBy]; ok && j > i && writtenBy(hits[j].Date, asOf) {
			follows[j] = append(follows[j], i)
			moved[i] = true
		}
	}
	if len(follows) == 0 {
		return nil
	}
	out := make([]int, 0, len(hits))
	var emit func(i int)
	emit = func(i int) {
		out = append(out, i)
		for _, k := range follows[i] {
			emit(k)
		}
	}
	for i := range hits {
		if !moved[i] {
			emit(i)
		}
	}
	return out
}

// candidateVectors is vectors(top), nil when there is no vectors func: the
// candidates' vectors, or nil when any is missing.
func candidateVectors(vectors func([]Ranked) [][]float32, top []Ranked) [][]float32 {
	if vectors == nil {
		return nil
	}
	return vectors(top)
}

// standsOut reports whether i and j are far more alike than either is
// to the rest: their similarity is margin above the mean of each one's
// similarity to the other candidates.
func standsOut(sim [][]float64, i, j int, margin float64) bool {
	n := len(sim)
	if n < 3 {
		return sim[i][j] >= margin
	}
	var ri, rj []float64
	for k := range n {
		if k != i && k != j {
			ri = append(ri, sim[i][k])
			rj = append(rj, sim[j][k])
		}
	}
	return sim[i][j] >= max(median(ri), median(rj))+margin
}

// median is the middle of xs (the mean of the two middle ones for an
// even count); it sorts xs.
func median(xs []float64) float64 {
	slices.Sort(xs)
	m := len(xs) / 2
	if len(xs)%2 == 0 {
		return (xs[m-1] + xs[m]) / 2
	}
	return xs[m]
}

// wordSimilarity is the cosine between word counts, each word weighted
// by idf. Its sums run over the words in sorted order, so that they come
// out the same on every run (in map order their last bits vary).
func wordSimilarity(docs []map[string]int, idf func(string) float64) [][]float64 {
	n := len(docs)
	sim := make([][]float64, n)
	for i := range sim {
		sim[i] = make([]float64, n)
	}
	terms := make([][]string, n)
	norms := make([]float64, n)
	for i, d := range docs {
		terms[i] = slices.Sorted(maps.Keys(d))
		for _, t := range terms[i] {
			w := float64(d[t]) * idf(t)
			norms[i] += w * w
		}
		norms[i] = math.Sqrt(norms[i])
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			s := 0.0
			for _, t := range terms[i] {
				if c2 := docs[j][t]; c2 > 0 {
					w := idf(t)
					s += float64(docs[i][t]) * w * float64(c2) * w
				}
			}
			if norms[i] > 0 && norms[j] > 0 {
				s /= norms[i] * norms[j]
			}
			sim[i][j], sim[j][i] = s, s
		}
	}
	return sim
}

// vectorSimilarity is the cosine between L2-normalised vectors.
func vectorSimilarity(vecs [][]float32) [][]float64 {
	n := len(vecs)
	sim := make([][]float64, n)
	for i := range sim {
		sim[i] = make([]float64, n)
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			s := float64(kernel.Dot(vecs[i], vecs[j]))
			sim[i][j], sim[j][i] = s, s
		}
	}
	return sim
}

// keyLine is the stems of the line of d (its heading counted as a line)
// that holds the most of the question's words qterms, by weight (the
// first of equal lines: qterms come in one order, so that the sums of
// equal lines are equal to the last bit).
func keyLine(d store.Drawer, qterms []string, idf func(string) float64) map[string]int {
	c, _ := keyLineText(d, qterms, idf)
	return c
}

// keyLineText is keyLine and the line's text.
func keyLineText(d store.Drawer, qterms []string, idf func(string) float64) (map[string]int, string) {
	var best map[string]int
	var text string
	bestW := -1.0
	for _, l := range append([]string{d.Heading}, strings.Split(d.Text, "\n")...) {
		c := stemCounts(l)
		w := 0.0
		for _, t := range qterms {
			if c[t] > 0 {
				w += idf(t)
			}
		}
		if w > bestW {
			best, bestW, text = c, w, l
		}
	}
	return best, text
}

// subjectCounts is the stems of line less the words that name a value (a
// number, an identifier, a name written with a capital inside the line,
// code): what two statements of one subject with different values have
// in common, which the values would dilute.
func subjectCounts(line string) map[string]int {
	out := map[string]int{}
	first := true
	for _, w := range strings.Fields(line) {
		t := strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		value := strings.ContainsAny(w, "`") || strings.IndexFunc(t, unicode.IsDigit) >= 0 ||
			strings.ContainsAny(t, "-_/@.:\\") || !first && startsUpper(t)
		if t != "" && w != "-" && w != "*" {
			first = false
		}
		if value {
			continue
		}
		for _, s := range fts.Tokens(t) {
			out[s]++
		}
	}
	return out
}

// textWords is the words of s, lower case, punctuation around them
// trimmed (an identifier such as "OPS-4471" or "v1.2" is one word).
func textWords(s string) []string {
	var out []string
	for _, w := range strings.Fields(s) {
		w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if w != "" {
			out = append(out, strings.ToLower(w))
		}
	}
	return out
}

// isoDateRE is a date as a query names one (when.Find reads it).
var isoDateRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// queryValues is the words of a question that name a value: with a digit
// or an identifier's inner mark ("OPS-4471", "v1.2", "600"), or a name
// written with a capital inside it ("Unleash"); a date is a time, not a
// value (AsksAboutPast reads it).
func queryValues(text string) []string {
	var out []string
	for i, w := range strings.Fields(text) {
		t := strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if t == "" || isoDateRE.MatchString(t) {
			continue
		}
		if strings.IndexFunc(t, unicode.IsDigit) >= 0 || strings.ContainsAny(t, "-_/@.:") || i > 0 && startsUpper(t) {
			out = append(out, strings.ToLower(t))
		}
	}
	return out
}

// startsUpper reports whether w starts with a capital letter followed by
// a lower-case one ("Unleash", "PostHog"; not "API").
func startsUpper(w string) bool {
	r := []rune(w)
	return len(r) > 1 && unicode.IsUpper(r[0]) && unicode.IsLower(r[1])
}

// queryStems are the query's words (stopwords dropped) as the index
// stems them.
func queryStems(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range store.QueryTerms(text) {
		for _, t := range fts.Tokens(w) {
			// Not the "s" of "what's", nor a number (the parts of a
			// date, a version): they name no subject.
			if len(t) > 1 && strings.TrimFunc(t, unicode.IsDigit) != "" {
				out[t] = true
			}
		}
	}
	return out
}

// stemCounts counts the index's stems of s.
func stemCounts(s string) map[string]int {
	out := map[string]int{}
	for _, t := range fts.Tokens(s) {
		out[t]++
	}
	return out
}

// AsksAboutPast reports whether a question asks about an earlier state:
// one of times, the windows when.Find read in text against ref (the day
// it is asked), is over before that day (NamesPast): "on 2026-03-10",
// "the 10th of March", "last week", "in 2022" are past. A time that
// reaches that day or lies ahead is not ("today", "this week", "since
// May", "next week", "in 2030", a date to come), nor a number when.Find
// does not read as a time ("version 2023", "pre-1920 coins"). Nor is a
// word alone: "before", "first", "until", "was", "did" are as common in
// questions about the present ("what did we set the timeout to?", "what
// runs first?") as about the past; text is not read for them.
func AsksAboutPast(_ string, times []when.Window, ref time.Time) bool {
	return NamesPast(times, ref)
}
