package summarize

import (
	"context"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hivemem/hivemem/internal/dedup"
	"github.com/hivemem/hivemem/internal/mdfence"
	"github.com/hivemem/hivemem/internal/memfile"
)

// Embedder turns texts into L2-normalised sentence vectors (the palace's
// MiniLM model, or any other). The extractive summariser uses it, when it
// has one, for how central a sentence is to its period; without one it
// uses word overlap. Whether a sentence repeats a kept one is always
// judged by word overlap (see similarity).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Extractive is the built-in summariser: no network, deterministic for a
// given embedder. It does not paraphrase: it chooses the sentences of the
// evicted sections that carry facts (numbers, dates, names, paths,
// commands, decisions and rules), favouring those central to their period
// and unlike what is already kept (maximal marginal relevance), and writes
// them under one line per period with its date. Rolling: the previous
// condensed history is read back into its periods and competes with the
// new sections for the same budget, the older the harder it is compressed
// (periods of one month, then of one year, merge into one line when their
// lines alone would take too much of the budget), and every period keeps at
// least its line. Because it only copies text, it cannot invent anything.
type Extractive struct {
	// Embedder, if not nil, gives sentence vectors; a failing embedder
	// falls back to word overlap rather than failing the condensation.
	Embedder Embedder
}

// Name implements Summarizer.
func (Extractive) Name() string { return ProviderExtractive }

// Limits that keep one long line from eating the whole budget.
const (
	maxHeadingWords = 20
	maxDetailWords  = 40
	maxHoistWords   = 25
	maxKeywordHoist = 10
	// maxCandidates bounds the sentences considered in one condensation
	// (the newest win), so a huge eviction costs bounded time.
	maxCandidates = 4000
)

// Limits that bound the output in bytes, not only in words: a token with no
// spaces (a base64 blob, a minified line, a long URL, a line of CJK text)
// costs one word per wordBytes bytes, and a token longer than maxTokenBytes
// is cut, marked "…", when it is copied into the summary. Nothing is lost:
// the reflector archives every evicted section verbatim before it swaps.
const (
	wordBytes     = 16
	maxTokenBytes = 128
)

// period is one line of the condensed history and the sentences it may
// keep: an evicted section, a period of the previous history, or several
// old periods merged.
type period struct {
	date     string // YYYY-MM-DD, YYYY-MM, YYYY or "" (undated)
	anchor   string // the period line without its "- " marker
	sections int    // how many sections it stands for
	cands    []*cand
}

// cand is one sentence (or code line) a period may keep.
type cand struct {
	text   string
	words  int
	info   float64 // facts it carries
	pos    int     // order within its period
	lead   string  // the label of its line ("Alice: "), part of text
	line   int     // the line it comes from, within its period
	vec    []float32
	terms  map[string]float64 // lexical vector (tf-idf, L2-normalised)
	keys   []string           // terms' keys, sorted: sums over them run in one order, so a summary is the same every time
	value  float64
	maxSim float64
	kept   bool
}

// Summarize implements Summarizer.
func (e Extractive) Summarize(ctx context.Context, req Request) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, failure(ProviderExtractive, err, "canceled: %v", err)
	}
	budget := req.budget()
	periods := oldPeriods(req.OldCondensed)
	for _, raw := range req.Evicted {
		if p := sectionPeriod(raw); p != nil {
			periods = append(periods, p)
		}
	}
	if len(periods) == 0 {
		return Result{}, failure(ProviderExtractive, nil, "nothing to condense: no evicted sections and no condensed history")
	}
	for i, p := range periods {
		for _, c := range p.cands {
			c.line |= i << 24 // a line id unique across periods, merged or not
		}
	}
	periods = mergeOldest(periods, budget)
	limitCandidates(periods)
	e.score(ctx, periods)
	lines := selectLines(periods, budget)
	condensed := strings.TrimSpace(sanitizeCondensed(strings.Join(lines, "\n")))
	if condensed == "" {
		return Result{}, failure(ProviderExtractive, nil, "condensed text came out empty")
	}
	return Result{Condensed: condensed, Hoist: extractHoist(req)}, nil
}

var (
	dateRe      = regexp.MustCompile(`\b(\d{4})-(\d{2})(?:-(\d{2}))?\b`)
	mergedRe    = regexp.MustCompile(`^(\d{4}(?:-\d{2})?) \((\d+) sections\b`)
	lineTagRe   = regexp.MustCompile(`^(?:\[[^\]\s]{1,24}\]\s*)+`)
	leadRe      = regexp.MustCompile(`^([A-Z][\p{L}0-9.'_-]*(?: [A-Z][\p{L}0-9.'_-]*){0,2}):\s+`)
	sentenceEnd = regexp.MustCompile(`[.!?…]+["')\]]*\s+`)
)

// periodDate finds the date a heading or period line starts with, or
// carries anywhere.
func periodDate(s string) string {
	if m := mergedRe.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	m := dateRe.FindStringSubmatch(s)
	if m == nil {
		if len(s) >= 4 && isYear(s[:4]) && (len(s) == 4 || s[4] == ' ') {
			return s[:4]
		}
		return ""
	}
	if m[3] == "" {
		return m[1] + "-" + m[2]
	}
	return m[1] + "-" + m[2] + "-" + m[3]
}

func isYear(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return len(s) == 4
}

// oldPeriods reads the previous condensed history back into periods: each
// top-level line is a period, indented lines and fenced blocks under it are
// its sentences. The pointer to the archive is left out; the reflector
// writes it again.
func oldPeriods(text string) []*period {
	text = strings.TrimSpace(strings.ReplaceAll(text, "\r\n", "\n"))
	if text == "" {
		return nil
	}
	var out []*period
	var cur *period
	var fs mdfence.State
	var block []string
	lineNo := 0
	add := func(t string) {
		lineNo++
		if cur == nil {
			cur = &period{sections: 1}
			out = append(out, cur)
			cur.anchor = t
			cur.date = periodDate(t)
			return
		}
		if mdfence.IsOpener(t) {
			cur.cands = append(cur.cands, newCand("", t, len(cur.cands), lineNo))
			return
		}
		lead, ss := sentences(t)
		for _, s := range ss {
			cur.cands = append(cur.cands, newCand(lead, s, len(cur.cands), lineNo))
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if open := fs.Open(); fs.Step(line) || open {
			block = append(block, line)
			if open && !fs.Open() {
				add(strings.Join(block, "\n"))
				block = nil
			}
			continue
		}
		t := strings.TrimSpace(line)
		if t == "" || IsArchivePointer(t) {
			continue
		}
		if isIndented(line) {
			add(cleanLine(t))
			continue
		}
		cur = nil
		t = cleanLine(t)
		add(t)
		if m := mergedRe.FindStringSubmatch(t); m != nil {
			fmt.Sscan(m[2], &cur.sections)
		}
	}
	if len(block) > 0 {
		add(strings.Join(block, "\n") + "\n" + fs.Closer())
	}
	return out
}

func isIndented(line string) bool {
	return strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")
}

// sectionPeriod turns one evicted section into a period: its heading is the
// period line, its sentences (and the command or path lines of its code
// blocks) the candidates.
func sectionPeriod(raw string) *period {
	lines := strings.Split(strings.ReplaceAll(raw, "\r\n", "\n"), "\n")
	heading := ""
	start := 0
	for start < len(lines) && strings.TrimSpace(lines[start]) == "" {
		start++
	}
	if start < len(lines) {
		if h, ok := headingText(lines[start]); ok {
			heading = h
			start++
		}
	}
	p := &period{sections: 1}
	seen := map[string]bool{}
	var fs mdfence.State
	day := periodDate(heading)
	push := func(lead, text string, line int) {
		text = truncateWords(resolveRelativeDates(text, day), maxDetailWords)
		key := normFact(lead + text)
		if key == "" || seen[key] {
			return
		}
		seen[key] = true
		p.cands = append(p.cands, newCand(lead, text, len(p.cands), line))
	}
	speakers := speakerNames(lines[start:])
	for lineNo, line := range lines[start:] {
		if fs.Step(line) {
			continue
		}
		if fs.Open() {
			code := strings.TrimSpace(line)
			if code == "" || !(isCommand(code) || hasPath(code)) {
				continue
			}
			if !strings.Contains(code, "`") {
				code = "`" + code + "`"
			}
			push("", code, lineNo)
			continue
		}
		if h, ok := headingText(line); ok {
			if h != "" && !isNoise(h) {
				push("", h, lineNo)
			}
			continue
		}
		text := cleanLine(line)
		if text == "" || isNoise(text) || strings.HasPrefix(text, "📌") {
			// 📌 lines are pinned already or hoisted by extractHoist;
			// repeating them here would only spend budget.
			continue
		}
		lead, ss := sentences(text)
		for _, s := range ss {
			if s = compress(s, speakers); s != "" && !onlyTalk(s, speakers) {
				push(lead, s, lineNo)
			}
		}
	}
	if heading == "" {
		if len(p.cands) == 0 {
			return nil
		}
		// No heading line: the first sentence stands in for it.
		heading = p.cands[0].text
		p.cands = p.cands[1:]
		for i, c := range p.cands {
			c.pos = i
		}
	}
	p.date = periodDate(heading)
	p.anchor = truncateWords(dropRepeatedDate(dropClockTimes(heading), p.date), maxHeadingWords)
	return p
}

// sentences splits one line of prose into sentences, and long sentences
// into their clauses (at "; " and at a dash between spaces). A leading tag
// such as "[12:03]" is dropped, and a leading label such as "Alice:" (who
// said it, or what kind of note it is) is returned apart: it belongs to
// every sentence of the line.
func sentences(line string) (lead string, out []string) {
	line = strings.TrimSpace(lineTagRe.ReplaceAllString(line, ""))
	if m := leadRe.FindStringSubmatch(line); m != nil && !strings.Contains(line[:len(m[0])], "://") {
		lead, line = m[1]+": ", line[len(m[0]):]
	}
	rest := line
	for rest != "" {
		loc := sentenceEnd.FindStringIndex(rest)
		end := len(rest)
		if loc != nil {
			end = loc[1]
		}
		// A full stop inside a number, path or abbreviation has no space
		// after it, so it never ends a sentence here.
		for _, c := range clauses(strings.TrimSpace(rest[:end])) {
			if c = trimInterjection(c); c != "" {
				out = append(out, c)
			}
		}
		rest = rest[end:]
	}
	return lead, out
}

// interjections are the words of talk that state nothing, said to open a
// sentence ("Oh, ", "Wow! ") or as the whole of one ("Yes, Caroline!").
var interjections = strings.Fields(`oh ooh wow whoa woah hey hi hello yeah yes yep yup nope well ok okay so
	anyway anyways also plus actually honestly basically um uh ah aw aww awww btw lol haha hmm cool great nice
	sure right thanks yay oof omg`)

var interjectionRe = regexp.MustCompile(`^(?i:` + strings.Join(interjections, "|") + `|aw+|thank you|by the way)(?:\s+[A-Z][\p{L}]*)?[,!.…]+\s+`)

// trimInterjection drops the interjections a sentence opens with ("Oh, ",
// "Wow, ", "Hey Sam! "), which carry nothing a later reader needs, as long
// as three words remain.
func trimInterjection(s string) string {
	for {
		loc := interjectionRe.FindStringIndex(s)
		if loc == nil || len(strings.Fields(s[loc[1]:])) < 3 {
			return s
		}
		rest := s[loc[1]:]
		r, n := utf8.DecodeRuneInString(rest)
		s = string(unicode.ToUpper(r)) + rest[n:]
	}
}

var clauseRe = regexp.MustCompile(`; | [-–—] `)

// clauses splits a sentence at its clause marks (a semicolon, a dash
// between spaces) when both sides keep at least four words.
func clauses(s string) []string {
	locs := clauseRe.FindAllStringIndex(s, -1)
	var out []string
	start := 0
	for _, l := range locs {
		next := l[1]
		left, right := s[start:l[0]], s[next:]
		if len(strings.Fields(left)) >= 4 && len(strings.Fields(right)) >= 4 {
			out = append(out, strings.TrimSpace(s[start:l[0]+1]))
			start = next
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// body is the candidate's text without its label: who said a sentence is
// on every sentence of its line, so it tells nothing about this one.
func (c *cand) body() string { return strings.TrimPrefix(c.text, c.lead) }

func newCand(lead, text string, pos, line int) *cand {
	t := lead + text
	return &cand{text: t, lead: lead, line: line, words: max(countWords(t), 1), pos: pos, info: infoScore(text)}
}

// mergeOldest merges the oldest periods while their lines alone would take
// more than a quarter of the budget: first the days of one month into a
// month, then the months of one year into a year, then neighbours two by
// two. The newest third of the periods is never merged.
func mergeOldest(ps []*period, budget int) []*period {
	ids := 0
	keepNewest := len(ps) / 3
	for _, level := range []int{7, 4, 0} {
		for float64(anchorWords(ps)) > float64(budget)/4 && len(ps) > 1 {
			merged := false
			for i := 0; i+1 < len(ps)-keepNewest; i++ {
				a, b := ps[i], ps[i+1]
				if level > 0 && (len(a.date) < level || len(b.date) < level || a.date[:level] != b.date[:level]) {
					continue
				}
				ps[i] = mergePeriods(a, b, level, &ids)
				ps = append(ps[:i+1], ps[i+2:]...)
				merged = true
				break
			}
			if !merged {
				break
			}
		}
	}
	return ps
}

func anchorWords(ps []*period) int {
	n := 0
	for _, p := range ps {
		n += countWords(p.anchor)
	}
	return n
}

// mergePeriods joins two neighbouring periods into one line that says what
// they cover; their sentences stay candidates, the first period's first.
// ids hands out line ids (negative, unlike those of sentences) to the
// period lines that become sentences.
func mergePeriods(a, b *period, level int, ids *int) *period {
	date := ""
	switch {
	case level > 0:
		date = a.date[:level]
	case a.date != "" && b.date != "" && a.date[:4] == b.date[:4]:
		date = a.date[:4]
	case a.date != "":
		date = a.date
	}
	first, last := a.date, b.date
	if first == "" {
		first = "undated"
	}
	if last == "" {
		last = "undated"
	}
	m := &period{date: date, sections: a.sections + b.sections}
	label := date
	if label == "" {
		label = "undated"
	}
	aFirst, aLast := dateRange(a)
	bFirst, bLast := dateRange(b)
	lo, hi := min(aFirst, bFirst), max(aLast, bLast)
	m.anchor = fmt.Sprintf("%s (%d sections, %s to %s)", label, m.sections, lo, hi)
	// A period's own line becomes one of the merged period's sentences, so
	// its topic can survive the merge.
	for _, p := range []*period{a, b} {
		if !mergedRe.MatchString(p.anchor) {
			*ids--
			c := newCand("", p.anchor, 0, *ids)
			// The line that named the period: its date is worth what a
			// number is, not what a date in a sentence is (every period
			// line has one), and naming the period half as much again.
			if rest := strings.TrimLeft(strings.TrimPrefix(p.anchor, p.date), " —–-:"); rest != p.anchor {
				if c.info = infoScore(rest); c.info > 0 {
					c.info++
				}
			}
			c.info += 0.5
			m.cands = append(m.cands, c)
		}
		m.cands = append(m.cands, p.cands...)
	}
	for i, c := range m.cands {
		c.pos = i
	}
	return m
}

var rangeRe = regexp.MustCompile(`sections, (\S+) to (\S+)\)`)

// dateRange is the first and last date of p's sections: the range of a
// merged period's anchor, else p's date ("undated" when it has none).
func dateRange(p *period) (first, last string) {
	if m := rangeRe.FindStringSubmatch(p.anchor); m != nil {
		return m[1], m[2]
	}
	if p.date == "" {
		return "undated", "undated"
	}
	return p.date, p.date
}

// limitCandidates keeps at most maxCandidates sentences, dropping the
// oldest periods' least informative ones first.
func limitCandidates(ps []*period) {
	n := 0
	for _, p := range ps {
		n += len(p.cands)
	}
	for i := 0; n > maxCandidates && i < len(ps); i++ {
		p := ps[i]
		drop := min(n-maxCandidates, len(p.cands)-min(len(p.cands), 1))
		if drop <= 0 {
			continue
		}
		sorted := slices.Clone(p.cands)
		sort.SliceStable(sorted, func(a, b int) bool { return sorted[a].info > sorted[b].info })
		keep := map[*cand]bool{}
		for _, c := range sorted[:len(sorted)-drop] {
			keep[c] = true
		}
		p.cands = slices.DeleteFunc(p.cands, func(c *cand) bool { return !keep[c] })
		n -= drop
	}
}

// score gives every candidate its value: the facts it carries, its
// centrality in its period (cosine to the period's mean vector) and, from
// its period's age, how hard it is compressed: the newest period counts a
// tenth more than the oldest (mergeOldest does most of the compressing of
// old periods; a steeper discount starves them of facts).
func (e Extractive) score(ctx context.Context, ps []*period) {
	var all []*cand
	for _, p := range ps {
		all = append(all, p.cands...)
	}
	lexicalVectors(all)
	if e.Embedder != nil && len(all) > 0 {
		texts := make([]string, len(all))
		for i, c := range all {
			texts[i] = c.text
		}
		vecs, err := e.Embedder.Embed(ctx, texts)
		if err == nil && len(vecs) == len(all) {
			for i, c := range all {
				c.vec = vecs[i]
			}
		}
	}
	for i, p := range ps {
		age := 1.0
		if len(ps) > 1 {
			age = 0.9 + 0.1*float64(i)/float64(len(ps)-1)
		}
		cent := centrality(p.cands)
		for j, c := range p.cands {
			c.value = age * mood(c.text) * (c.info + 0.5*cent[j])
		}
	}
}

// centrality is each candidate's cosine to its period's centroid, in [0, 1]:
// with sentence vectors, the mean of that cosine and the one over words
// (vectors see what sentences mean, words the names and terms they share;
// either alone is the lesser guide: answer coverage at 600 words 16.3 %
// with vectors alone, 16.5 % with the mean), else the one over words.
func centrality(cs []*cand) []float64 {
	out := make([]float64, len(cs))
	if len(cs) < 2 {
		return out
	}
	if cs[0].vec != nil {
		dim := len(cs[0].vec)
		mean := make([]float64, dim)
		for _, c := range cs {
			for k := 0; k < dim && k < len(c.vec); k++ {
				mean[k] += float64(c.vec[k])
			}
		}
		norm := 0.0
		for _, v := range mean {
			norm += v * v
		}
		norm = math.Sqrt(norm)
		if norm == 0 {
			return out
		}
		for i, c := range cs {
			d := 0.0
			for k := 0; k < dim && k < len(c.vec); k++ {
				d += float64(c.vec[k]) * mean[k]
			}
			out[i] = max(d/norm, 0)
		}
		lex := lexicalCentrality(cs)
		for i := range out {
			out[i] = (out[i] + lex[i]) / 2
		}
		return out
	}
	return lexicalCentrality(cs)
}

// lexicalCentrality is each candidate's cosine to its period's centroid
// over tf-idf word vectors.
func lexicalCentrality(cs []*cand) []float64 {
	out := make([]float64, len(cs))
	mean := map[string]float64{}
	var keys []string
	for _, c := range cs {
		for _, t := range c.keys {
			if _, ok := mean[t]; !ok {
				keys = append(keys, t)
			}
			mean[t] += c.terms[t]
		}
	}
	sort.Strings(keys)
	norm := 0.0
	for _, t := range keys {
		norm += mean[t] * mean[t]
	}
	norm = math.Sqrt(norm)
	if norm == 0 {
		return out
	}
	for i, c := range cs {
		d := 0.0
		for _, t := range c.keys {
			d += c.terms[t] * mean[t]
		}
		out[i] = d / norm
	}
	return out
}

// similarity is the cosine of two candidates' tf-idf vectors: a sentence
// repeats a kept one when it says the same things in the same words.
// Sentence vectors are not used here: two sentences of one conversation
// are close in MiniLM space whenever they share a topic, and treating them
// as repeats starved the summary of distinct facts (answer coverage at 600
// words 13.8 % with them, against 15.7 % without).
func similarity(a, b *cand) float64 {
	small, big := a, b
	if len(small.keys) > len(big.keys) {
		small, big = big, small
	}
	d := 0.0
	for _, t := range small.keys {
		d += small.terms[t] * big.terms[t]
	}
	return d
}

// lexicalVectors gives every candidate an L2-normalised tf-idf vector over
// its content words, and adds to its information how specific its words
// are in this condensation: a thing named in a few sentences is more likely
// a fact than a word used throughout, and a name counts only when it is not
// in every other sentence (the people of a conversation, the project a
// whole memory is about).
func lexicalVectors(cs []*cand) {
	df := map[string]int{}
	toks := make([][]string, len(cs))
	for i, c := range cs {
		seen := map[string]bool{}
		for _, t := range contentWords(c.body()) {
			toks[i] = append(toks[i], t)
			if !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	n := float64(len(cs))
	for i, c := range cs {
		c.terms = map[string]float64{}
		for _, t := range toks[i] {
			if _, ok := c.terms[t]; !ok {
				c.keys = append(c.keys, t)
			}
			c.terms[t] += math.Log(1 + n/float64(df[t]))
		}
		sort.Strings(c.keys)
		if len(c.terms) > 0 && n > 8 {
			spec := 0.0
			for _, t := range c.keys {
				spec += math.Log(n/float64(df[t])) / math.Log(n)
			}
			c.info += min(0.5*spec, 4)
			names := 0
			for _, w := range properNouns(c.body()) {
				if float64(df[w]) <= max(2, 0.03*n) {
					names++
				}
			}
			c.info += float64(min(names, 3))
		}
		norm := 0.0
		for _, t := range c.keys {
			norm += c.terms[t] * c.terms[t]
		}
		norm = math.Sqrt(norm)
		for t := range c.terms {
			c.terms[t] /= norm
		}
	}
}

// contentWords returns the lower-cased words of s that are not stop words.
func contentWords(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '\'')
	}) {
		w = strings.Trim(w, "'")
		if len(w) < 3 || stopWords[w] {
			continue
		}
		out = append(out, w)
	}
	return out
}

var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`the and for are but not you all any can had her was one our out has him his how its may new now old see two way who did get got let say she too use that this with have from they will would there their what about which when make like time just know take into year your good some could them than then look only come over think also back after work first well even want because these give most very been were said each much where here such through while should really thing things yeah okay wow bye congrats congratulations totally definitely absolutely gonna wanna sounds awesome thanks thank great glad sure lot lots feel feels felt love loved awesome amazing cool nice hey hi hello i'm it's that's you're i've i'd don't can't didn't doesn't isn't wasn't we're they're let's what's`) {
		stopWords[w] = true
	}
}

// selectLines chooses the output within budget: every period's line first
// (newest first, while the budget allows), then each period's best
// sentence (newest first), then the best remaining sentences by value per
// word, discounted by their similarity to what is already kept (maximal
// marginal relevance). The lines are written in chronological order, each
// period's sentences in their own order.
func selectLines(ps []*period, budget int) []string {
	used := 0
	keptAnchor := make([]bool, len(ps))
	for i := len(ps) - 1; i >= 0; i-- {
		if w := countWords(ps[i].anchor); used+w <= budget {
			keptAnchor[i] = true
			used += w
		}
	}
	if used == 0 {
		// Even the newest line is over budget: keep a piece of it rather
		// than nothing, since condensed must not be empty.
		last := ps[len(ps)-1]
		return []string{"- " + truncateWords(last.anchor, max(budget, 1))}
	}
	var kept []*cand
	// A sentence whose line already has a kept sentence shares its label.
	lineKept := map[int]bool{}
	cost := func(c *cand) int {
		if c.lead != "" && lineKept[c.line] {
			return max(c.words-countWords(c.lead), 1)
		}
		return c.words
	}
	take := func(c *cand) {
		used += cost(c)
		c.kept = true
		lineKept[c.line] = true
		kept = append(kept, c)
		for _, p := range ps {
			for _, o := range p.cands {
				if !o.kept {
					o.maxSim = max(o.maxSim, similarity(c, o))
				}
			}
		}
	}
	// A sentence is worth what it does not repeat of the kept ones: its
	// value falls to nothing as it nears a kept sentence.
	const lambda = 1.0
	gain := func(c *cand) float64 {
		return (c.value * (1 - lambda*c.maxSim)) / float64(cost(c)+4)
	}
	for i := len(ps) - 1; i >= 0; i-- {
		if !keptAnchor[i] {
			continue
		}
		var best *cand
		for _, c := range ps[i].cands {
			if used+cost(c) <= budget && c.info > 0 && (best == nil || gain(c) > gain(best)) {
				best = c
			}
		}
		if best != nil {
			take(best)
		}
	}
	for {
		var best *cand
		bg := 0.0
		for i, p := range ps {
			if !keptAnchor[i] {
				continue
			}
			for _, c := range p.cands {
				if c.kept || used+cost(c) > budget || c.info <= 0 || c.maxSim > 0.9 {
					continue
				}
				if g := gain(c); best == nil || g > bg {
					best, bg = c, g
				}
			}
		}
		if best == nil {
			break
		}
		take(best)
	}
	var lines []string
	for i, p := range ps {
		if !keptAnchor[i] {
			continue
		}
		lines = append(lines, "- "+p.anchor)
		var prev *cand
		for _, c := range p.cands {
			if !c.kept {
				continue
			}
			if prev != nil && prev.line == c.line && prev.lead == c.lead && !mdfence.IsOpener(c.text) && !mdfence.IsOpener(prev.text) {
				lines[len(lines)-1] += " " + strings.TrimPrefix(c.text, c.lead)
			} else {
				lines = append(lines, indent(c.text))
			}
			prev = c
		}
	}
	return lines
}

// indent renders a kept sentence under its period line; a fenced block
// keeps its lines, each indented.
func indent(text string) string {
	if mdfence.IsOpener(strings.SplitN(text, "\n", 2)[0]) {
		ls := strings.Split(text, "\n")
		for i, l := range ls {
			ls[i] = "  " + l
		}
		return strings.Join(ls, "\n")
	}
	return "  - " + text
}

// ArchivePointer is that line for an archive directory given relative to
// the home (e.g. "hive/archive/alice/").
func ArchivePointer(dir string) string { return memfile.ArchivePointerPrefix + dir }

// IsArchivePointer reports whether a line of condensed text is the pointer
// to the archive.
func IsArchivePointer(line string) bool {
	return strings.HasPrefix(strings.TrimSpace(line), memfile.ArchivePointerPrefix)
}

// StripArchivePointer removes the pointer line(s) from condensed text.
func StripArchivePointer(text string) string {
	lines := strings.Split(text, "\n")
	lines = slices.DeleteFunc(lines, IsArchivePointer)
	return strings.TrimRight(strings.Join(lines, "\n"), "\n \t\r")
}

var (
	headingRe  = regexp.MustCompile(`^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$`)
	listRe     = regexp.MustCompile(`^\s*(?:>\s*)*(?:[-*+]\s+|\d{1,3}[.)]\s+)?(?:\[[ xX]\]\s+)?`)
	pathRe     = regexp.MustCompile(`(?:^|[\s(\[{"'=:])(?:~|\.{1,2})?/[A-Za-z0-9._-]+|[A-Za-z0-9._-]+/[A-Za-z0-9._-]+`)
	fileRe     = regexp.MustCompile(`(?i)\b[\w-]+\.(?:go|mod|sum|md|txt|json|jsonl|toml|ya?ml|ini|cfg|conf|env|sh|bash|zsh|fish|ps1|py|ipynb|js|mjs|cjs|ts|tsx|jsx|vue|svelte|rs|c|h|cc|cpp|hpp|java|kt|rb|php|cs|swift|scala|sql|db|sqlite|html?|css|scss|xml|csv|tsv|log|lock|proto|tf|lua|zig|nix|gz|tgz|tar|zip|pem|crt|key|safetensors|onnx|bin|wasm|svg|png|jpe?g|pdf)\b`)
	durableRe  = regexp.MustCompile(`(?i)\b(?:always|never|convention|decided|from now on)\b`)
	undecided  = regexp.MustCompile(`(?i)(?:\bnot|n't|\byet to)\s+(?:yet\s+)?(?:decided|always|never)\b`)
	ruleLineRe = regexp.MustCompile(`^\s*(?:[-*_]\s*){3,}$|^\s*\|?\s*:?-{3,}`)
)

// headingText returns the text of a markdown ATX heading line.
func headingText(line string) (string, bool) {
	m := headingRe.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	return strings.TrimSpace(m[1]), true
}

// cleanLine strips list, quote and checkbox markers and collapses spaces.
func cleanLine(line string) string {
	line = listRe.ReplaceAllString(line, "")
	return strings.Join(strings.Fields(line), " ")
}

// isNoise reports placeholder and decoration lines that carry no fact.
func isNoise(text string) bool {
	t := strings.ToLower(strings.Trim(text, " _*()"))
	switch t {
	case "", "none", "none yet", "n/a", "tbd", "...", "…":
		return true
	}
	return ruleLineRe.MatchString(text)
}

func isCommand(s string) bool {
	return strings.HasPrefix(s, "$ ") || strings.HasPrefix(s, "# $ ") || strings.Contains(s, " $ ")
}

func hasPath(s string) bool {
	if strings.Contains(s, "://") {
		return true
	}
	// The regexps are the slow part of summarising; most prose lines have
	// neither a slash nor a dot between word characters and skip them.
	return strings.IndexByte(s, '/') >= 0 && pathRe.MatchString(s) || strings.IndexByte(s, '.') >= 0 && fileRe.MatchString(s)
}

// keywords mark lines that carry a decision, a rule or a failure.
var keywords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`decided decide decision must always never use uses using used fixed fix fixes
		because todo fixme prefer prefers preferred convention important remember avoid don't instead workaround
		broke broken fail fails failed failing error bug agreed require requires required deprecated blocked deadline`) {
		keywords[w] = true
	}
}

// hasKeyword reports whether s holds one of keywords as a whole word (case
// folded), or one of the two-word ones.
func hasKeyword(s string) bool {
	low := strings.ToLower(s)
	if strings.Contains(low, "do not") || strings.Contains(low, "root cause") {
		return true
	}
	for _, w := range strings.FieldsFunc(low, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r == '\'' || r >= '0' && r <= '9' || r == '_' || r > 127)
	}) {
		if keywords[strings.Trim(w, "'")] || keywords[w] {
			return true
		}
	}
	return false
}

// isProperWord: a capital letter, then letters or digits (at least two characters).
func isProperWord(w string) bool {
	if len(w) < 2 || w[0] < 'A' || w[0] > 'Z' {
		return false
	}
	for i := 1; i < len(w); i++ {
		c := w[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// mood is how much a sentence's kind weighs on its value: a question asks
// for a fact, its answer gives it.
func mood(s string) float64 {
	t := strings.TrimRight(strings.TrimSpace(s), `"')]`)
	switch {
	case strings.HasSuffix(t, "?"):
		return 0.5
	case addressRe.MatchString(t) && !selfRe.MatchString(t):
		// Said to the listener about the listener ("You'd be a great
		// counselor!", "Don't be afraid"): a reaction, rarely a fact.
		return 0.6
	}
	return 1
}

var (
	addressRe = regexp.MustCompile(`(?i)\b(?:you|your|you're|you've|you'd|you'll|yourself)\b`)
	selfRe    = regexp.MustCompile(`(?i)\b(?:i|my|me|i'm|i've|i'd|i'll|we|our|us|we're|we've|mine)\b`)
)

// infoScore weighs the facts a sentence carries: names (capitalised words
// that do not start it, acronyms), numbers, dates and times, paths, file
// names, code and commands, and the words of decisions, rules and causes
// ("always", "never", "must", "switched to", "because"). A question, or a
// sentence with nothing of these, is worth little; 0 means it is prose the
// budget can do without.
func infoScore(s string) float64 {
	score := 0.0
	if strings.Contains(s, "📌") {
		score += 3
	}
	body := s
	if m := leadRe.FindStringSubmatch(s); m != nil {
		body = s[len(m[0]):] // who said it is on every sentence of the line
	}
	if strings.Contains(body, "`") {
		score++
	}
	if hasPath(body) {
		score++
	}
	if isCommand(body) {
		score++
	}
	// A date counts as one number and makes the sentence temporal, however
	// it is written ("2023-05-07", "7 May 2023", "May 7th").
	dates := 0
	undated := dateRe.ReplaceAllStringFunc(body, func(string) string { dates++; return "date" })
	undated = writtenDateRe.ReplaceAllStringFunc(undated, func(string) string { dates++; return "date" })
	score += min(float64(numbers(undated)+2*dates), 2)
	if dates > 0 || temporalRe.MatchString(body) {
		score++
	}
	if hasKeyword(body) {
		score += 0.5
		if durableRe.MatchString(body) && !undecided.MatchString(body) {
			score += 0.5 // a rule or a decision outranks a mere mention
		}
	}
	if changeRe.MatchString(body) {
		score += 0.5
	}
	if len(contentWords(body)) == 0 {
		return 0
	}
	return score + 0.01 // any sentence with a content word may be kept, facts first
}

var (
	temporalRe = regexp.MustCompile(`(?i)\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|monday|tuesday|wednesday|thursday|friday|saturday|sunday|yesterday|tomorrow|tonight|weekend|last (?:week|month|year|night)|next (?:week|month|year)|ago|since|until|deadline)\b`)
	changeRe   = regexp.MustCompile(`(?i)\b(?:switched|moved|migrated|changed|replaced|renamed|started|stopped|joined|left|bought|sold|adopted|married|released|shipped|launched|deployed|upgraded|downgraded)\b`)
)

// numbers counts the tokens holding a digit.
func numbers(s string) int {
	n := 0
	for _, w := range strings.Fields(s) {
		if strings.ContainsAny(w, "0123456789") {
			n++
		}
	}
	return n
}

// properNouns returns the distinct capitalised words, lower-cased, that do
// not start a sentence (names of people, places, projects, tools); acronyms
// count too.
func properNouns(s string) []string {
	words := strings.Fields(s)
	seen := map[string]bool{}
	for i := 1; i < len(words); i++ {
		prev := words[i-1]
		if strings.HasSuffix(prev, ".") || strings.HasSuffix(prev, "!") || strings.HasSuffix(prev, "?") || strings.HasSuffix(prev, ":") {
			continue
		}
		w := strings.Trim(words[i], `.,;:!?()[]{}"'`)
		w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
		if isProperWord(w) && !seen[strings.ToLower(w)] {
			seen[strings.ToLower(w)] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// ruleRe matches a line that states a rule or a decision the way notes
// do: a label ("Rule:", "Convention:", "Decision:"), an imperative
// ("Always run …", "Never push …", "Do not …"), the team as subject ("We
// always …", "We decided to …", "We switched to …") or "from now on".
var ruleRe = regexp.MustCompile(`(?i)^(?:(?:rule|convention|policy|decision|decided|agreed)(?:\s+#?\d+)?\s*:\s*\S` +
	`|(?:always|never|must)\s+[a-z]` +
	`|(?:do not|don't)\s+[a-z]` +
	`|decided\s+(?:to|that|on|against)\b` +
	`|(?:we|the team|everyone|all agents|agents)\s+(?:always|never|must|do not|don't|decided|agreed|switched|moved|standardi[sz]ed|use|prefer)\b` +
	`|from now on\b)`)

// isDurableRule reports whether a line is very likely a durable fact worth
// pinning: a rule or decision in the form ruleRe knows, in one short
// sentence, not a question or an exclamation (those are talk, not rules),
// not something undecided, and not a line said by someone in a
// conversation ("Sam: I'm always here for you"). The aim is precision: a
// missed rule is still in the condensed history and the archive, a wrong
// pin stays in the file for good.
func isDurableRule(text string) bool {
	text = strings.TrimSpace(lineTagRe.ReplaceAllString(text, ""))
	if countWords(text) > maxHoistWords || strings.ContainsAny(text, "!?") || undecided.MatchString(text) {
		return false
	}
	if m := leadRe.FindStringSubmatch(text); m != nil {
		switch strings.ToLower(m[1]) {
		case "rule", "convention", "policy", "decision", "decided", "agreed":
		default:
			return false // someone's words in a conversation
		}
	}
	if _, ss := sentences(text); len(ss) > 2 || len(strings.Fields(text)) < 4 {
		return false
	}
	return ruleRe.MatchString(text) && !notRuleRe.MatchString(text)
}

// notRuleRe: openings that look like rules but are talk ("Must have been
// hard", "Don't worry").
var notRuleRe = regexp.MustCompile(`(?i)^(?:must (?:have|be|been)\b|(?:do not|don't) (?:worry|mind|be sorry|panic|get me wrong)\b|never mind\b)`)

// extractHoist picks the lines of the evicted sections that are explicitly
// durable: every 📌 line (those are pinned by the file's own rules and must
// survive), plus, conservatively, a few short lines stating a rule or a
// decision. Facts already pinned, in any spelling normFact equates, are left
// out.
func extractHoist(req Request) []string {
	have := map[string]bool{}
	for _, p := range req.Pinned {
		have[normFact(p)] = true
	}
	var pins, keyword []string
	var lines []string     // every line read, in order
	at := map[string]int{} // a keyword rule's place in lines
	for _, raw := range req.Evicted {
		var fs mdfence.State
		for _, line := range strings.Split(strings.ReplaceAll(raw, "\r\n", "\n"), "\n") {
			if fs.Step(line) || fs.Open() {
				continue
			}
			if _, ok := headingText(line); ok {
				continue
			}
			text := cleanLine(line)
			pinned := strings.HasPrefix(text, "📌")
			text = strings.TrimSpace(strings.TrimPrefix(text, "📌"))
			if text == "" || isNoise(text) {
				continue
			}
			lines = append(lines, text)
			key := normFact(text)
			if key == "" || have[key] {
				continue
			}
			switch {
			case pinned:
				have[key] = true
				pins = append(pins, text)
			case isDurableRule(text):
				have[key] = true
				keyword = append(keyword, text)
				at[text] = len(lines) - 1
			}
		}
	}
	// A rule that a later line or a pinned fact states again with
	// something changed is outdated: pinning it would present it as
	// current (a 📌 line is the agent's own, and stays).
	keyword = slices.DeleteFunc(keyword, func(rule string) bool {
		later := append(slices.Clone(lines[at[rule]+1:]), req.Pinned...)
		return slices.ContainsFunc(later, func(l string) bool { return dedup.Outdates(rule, l) })
	})
	if len(keyword) > maxKeywordHoist {
		keyword = keyword[len(keyword)-maxKeywordHoist:] // the newest rules win
	}
	return append(pins, keyword...)
}

// normFact is the comparison key for facts: list markers, 📌 and case are
// ignored, spaces collapsed, a trailing full stop dropped.
func normFact(s string) string {
	s = strings.TrimSpace(s)
	for {
		t := strings.TrimLeft(s, " \t")
		t = strings.TrimPrefix(t, "- ")
		t = strings.TrimPrefix(t, "* ")
		t = strings.TrimPrefix(t, "📌")
		if t == s {
			break
		}
		s = t
	}
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	return strings.TrimRight(s, ".")
}

// countWords counts s against the word budget: each whitespace-separated
// token is one word per started wordBytes bytes, so the budget bounds the
// summary's size in bytes as well as in words.
func countWords(s string) int {
	n := 0
	for _, w := range strings.Fields(s) {
		n += tokenWords(w)
	}
	return n
}

func tokenWords(w string) int { return (len(w) + wordBytes - 1) / wordBytes }

// truncateWords keeps the first n words of s (as countWords counts them),
// cutting every token longer than maxTokenBytes, and marks each cut with
// "…". A token that only partly fits is cut at the budget.
func truncateWords(s string, n int) string {
	fields := strings.Fields(s)
	long := slices.ContainsFunc(fields, func(w string) bool { return len(w) > maxTokenBytes })
	if !long && countWords(s) <= n {
		return s
	}
	var b strings.Builder
	left := n
	for _, w := range fields {
		if len(w) > maxTokenBytes {
			w = cutBytes(w, maxTokenBytes-len("…")) + "…"
		}
		if c := tokenWords(w); c > left {
			if left > 0 {
				if b.Len() > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(cutBytes(w, left*wordBytes-len("…")))
			}
			if !strings.HasSuffix(b.String(), "…") {
				b.WriteString("…")
			}
			break
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
		left -= tokenWords(w)
	}
	return b.String()
}

// cutBytes returns the longest prefix of s of at most n bytes that does not
// split a UTF-8 sequence.
func cutBytes(s string, n int) string {
	if n >= len(s) {
		return s
	}
	n = max(n, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
