package summarize

import (
	"context"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// Extractive is the built-in summariser: no network, no model, deterministic.
// It does not paraphrase; it keeps the lines of the evicted sections that
// carry facts (paths, file names, code, numbers and dates, commands, names,
// decision words), each under its section's heading so the date and topic
// stay attached, and merges them with the old condensed text within the word
// budget. Because it only copies lines, it cannot invent anything, and the
// proper nouns, numbers and dates a later search asks about survive.
type Extractive struct{}

// Name implements Summarizer.
func (Extractive) Name() string { return ProviderExtractive }

// Limits that keep one long line from eating the whole budget.
const (
	maxHeadingWords = 20
	maxDetailWords  = 40
	maxHoistWords   = 30
	maxKeywordHoist = 10
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

// Summarize implements Summarizer. Budget rules: the newest material wins;
// every evicted section keeps at least its heading line while the budget
// allows, then its most informative line, then the rest; the old condensed
// text (older than every evicted section) gets at most a quarter of the
// budget unless the sections leave more unused, and loses its oldest lines
// first.
func (Extractive) Summarize(ctx context.Context, req Request) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, failure(ProviderExtractive, err, "canceled: %v", err)
	}
	budget := req.budget()
	old := oldCondensedUnits(req.OldCondensed)
	var secs []unit
	for i, raw := range req.Evicted {
		secs = append(secs, sectionUnits(raw, i)...)
	}
	if len(old) == 0 && len(secs) == 0 {
		return Result{}, failure(ProviderExtractive, nil, "nothing to condense: no evicted sections and no condensed history")
	}

	oldWords := 0
	for _, u := range old {
		oldWords += u.words
	}
	// Headings of the evicted sections come first; then the old text gets at
	// most a quarter of the budget; the sections' details fill the rest, and
	// whatever the old text leaves unused goes back to them.
	keptSecs, usedSecs := selectUnits(secs, nil, budget, 0)
	oldShare := min(oldWords, budget/4, budget-usedSecs)
	keptSecs, usedSecs = selectUnits(secs, keptSecs, budget-oldShare, 2)
	keptOld, usedOld := selectUnits(old, nil, budget-usedSecs, 2)
	keptSecs, _ = selectUnits(secs, keptSecs, budget-usedOld, 2)

	var lines []string
	for i, u := range old {
		if keptOld[i] {
			lines = append(lines, u.text)
		}
	}
	for i, u := range secs {
		if keptSecs[i] {
			lines = append(lines, u.text)
		}
	}
	if len(lines) == 0 {
		// Even the newest heading is over budget: keep a truncated piece of it
		// rather than return nothing, since condensed must not be empty.
		u := secs
		if len(u) == 0 {
			u = old
		}
		last := u[len(u)-1]
		for i := len(u) - 1; i >= 0; i-- {
			if u[i].prio == 0 {
				last = u[i]
				break
			}
		}
		lines = append(lines, truncateWords(strings.TrimSpace(last.text), max(budget, 1)))
	}
	condensed := strings.TrimSpace(sanitizeCondensed(strings.Join(lines, "\n")))
	if condensed == "" {
		return Result{}, failure(ProviderExtractive, nil, "condensed text came out empty")
	}
	return Result{Condensed: condensed, Hoist: extractHoist(req)}, nil
}

// unit is one candidate line (or fenced block) of the condensed output.
type unit struct {
	text   string // rendered markdown, indentation included
	words  int    // words counted against the budget (a section bullet's "-" is not one)
	group  int    // chronological group: a section index, or negative for old condensed blocks
	pos    int    // position within the group, for stable ordering
	prio   int    // 0 anchor (heading), 1 best line of the group, 2 the rest
	score  int    // how many kinds of fact the line carries
	parent int    // index of the anchor this unit depends on, or -1
}

// selectUnits keeps units of priority up to maxPrio within budget: by
// priority, then newest group first, then (for details) most informative
// first. A detail is only kept when its anchor is, so no line loses its date
// and topic. already, if not nil, holds units kept by an earlier pass; they
// stay kept and count against the budget.
func selectUnits(units []unit, already []bool, budget, maxPrio int) ([]bool, int) {
	kept := make([]bool, len(units))
	used := 0
	for i := range units {
		if already != nil && already[i] {
			kept[i] = true
			used += units[i].words
		}
	}
	order := make([]int, len(units))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		ua, ub := units[order[a]], units[order[b]]
		if ua.prio != ub.prio {
			return ua.prio < ub.prio
		}
		if ua.group != ub.group {
			return ua.group > ub.group
		}
		if ua.score != ub.score {
			return ua.score > ub.score
		}
		return ua.pos < ub.pos
	})
	for _, i := range order {
		u := units[i]
		if kept[i] || u.prio > maxPrio || (u.parent >= 0 && !kept[u.parent]) {
			continue
		}
		if used+u.words <= budget {
			kept[i] = true
			used += u.words
		}
	}
	return kept, used
}

// oldCondensedUnits splits the current condensed text into units: each
// top-level line is an anchor, indented lines and fenced blocks hang off the
// anchor above them. Groups are numbered negative so they rank older than
// every evicted section, the first line being the oldest.
func oldCondensedUnits(text string) []unit {
	text = strings.TrimSpace(strings.ReplaceAll(text, "\r\n", "\n"))
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	var blocks [][]string // a unit's lines; fenced blocks stay together
	var fence string
	for _, line := range lines {
		if fence != "" {
			blocks[len(blocks)-1] = append(blocks[len(blocks)-1], line)
			if m := fenceMarker(line); m != "" && m[0] == fence[0] && len(m) >= len(fence) {
				fence = ""
			}
			continue
		}
		if m := fenceMarker(line); m != "" {
			fence = m
			blocks = append(blocks, []string{line})
			continue
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		blocks = append(blocks, []string{line})
	}
	units := make([]unit, 0, len(blocks))
	anchors := 0
	for _, b := range blocks {
		if !isIndented(b[0]) && fenceMarker(b[0]) == "" {
			anchors++
		}
	}
	group, parent, pos := -anchors-1, -1, 0
	for _, b := range blocks {
		u := unit{text: strings.TrimRight(strings.Join(b, "\n"), " \t"), words: countWords(strings.Join(b, " ")), parent: -1}
		if !isIndented(b[0]) && fenceMarker(b[0]) == "" {
			group++
			pos = 0
			parent = len(units)
			u.group, u.prio = group, 0
		} else {
			pos++
			u.group, u.pos, u.parent = group, pos, parent
			u.prio = 2
			if pos == 1 {
				u.prio = 1
			}
		}
		units = append(units, u)
	}
	return units
}

func isIndented(line string) bool {
	return strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")
}

// sectionUnits turns one evicted section into an anchor bullet (its heading)
// and indented detail bullets for the lines worth keeping.
func sectionUnits(raw string, index int) []unit {
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

	type cand struct {
		text  string
		score int
	}
	var cands []cand
	var firstBody string
	seen := map[string]bool{}
	var fence string
	for _, line := range lines[start:] {
		if m := fenceMarker(line); m != "" {
			if fence == "" {
				fence = m
			} else if m[0] == fence[0] && len(m) >= len(fence) {
				fence = ""
			}
			continue
		}
		var text string
		if fence != "" {
			code := strings.TrimSpace(line)
			if code == "" || !(isCommand(code) || hasPath(code)) {
				continue
			}
			text = code
			if !strings.Contains(code, "`") {
				text = "`" + code + "`"
			}
		} else {
			text = cleanLine(line)
			if h, ok := headingText(line); ok {
				text = h
			}
			if text == "" || isNoise(text) || strings.HasPrefix(text, "📌") {
				// 📌 lines are pinned already or hoisted by extractHoist;
				// repeating them here would only spend budget.
				continue
			}
		}
		text = truncateWords(text, maxDetailWords)
		if firstBody == "" {
			firstBody = text
		}
		key := normFact(text)
		if seen[key] {
			continue
		}
		if s := factScore(text); s > 0 {
			seen[key] = true
			cands = append(cands, cand{text, s})
		}
	}
	if heading == "" {
		// No heading line: the first body line stands in for it.
		heading = firstBody
		if len(cands) > 0 && cands[0].text == firstBody {
			cands = cands[1:]
		}
	} else if len(cands) == 0 && firstBody != "" {
		// Nothing factual: keep the first line as a last resort, after
		// every factual line of every section.
		cands = append(cands, cand{firstBody, 0})
	}
	if heading == "" {
		return nil
	}
	heading = truncateWords(heading, maxHeadingWords)
	units := []unit{{text: "- " + heading, words: countWords(heading), group: index, prio: 0, parent: -1}}
	anchor := 0
	best := -1
	for i, c := range cands {
		if c.score > 0 && (best < 0 || c.score > cands[best].score) {
			best = i
		}
	}
	for i, c := range cands {
		prio := 2
		if i == best {
			prio = 1
		}
		units = append(units, unit{
			text: "  - " + c.text, words: countWords(c.text), group: index, pos: i + 1,
			prio: prio, score: c.score, parent: anchor,
		})
	}
	return units
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

// factScore counts the kinds of fact a line carries; 0 means it is prose
// the budget can do without.
func factScore(s string) int {
	score := 0
	if strings.Contains(s, "📌") {
		score += 3
	}
	if strings.Contains(s, "`") {
		score++
	}
	if hasPath(s) {
		score++
	}
	if isCommand(s) {
		score++
	}
	if strings.ContainsAny(s, "0123456789") {
		score++
	}
	if hasKeyword(s) {
		score++
		if durableRe.MatchString(s) && !undecided.MatchString(s) {
			score++ // a rule or a decision outranks a mere mention
		}
	}
	if hasProperNoun(s) {
		score++
	}
	return score
}

// hasProperNoun looks for a capitalised word that does not start a sentence
// (names of people, projects, tools); acronyms count too.
func hasProperNoun(s string) bool {
	words := strings.Fields(s)
	for i := 1; i < len(words); i++ {
		prev := words[i-1]
		if strings.HasSuffix(prev, ".") || strings.HasSuffix(prev, "!") || strings.HasSuffix(prev, "?") || strings.HasSuffix(prev, ":") {
			continue
		}
		w := strings.Trim(words[i], `.,;:!?()[]{}"'`)
		if isProperWord(w) {
			return true
		}
	}
	return false
}

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
	for _, raw := range req.Evicted {
		var fence string
		for _, line := range strings.Split(strings.ReplaceAll(raw, "\r\n", "\n"), "\n") {
			if m := fenceMarker(line); m != "" {
				if fence == "" {
					fence = m
				} else if m[0] == fence[0] && len(m) >= len(fence) {
					fence = ""
				}
				continue
			}
			if fence != "" {
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
			key := normFact(text)
			if key == "" || have[key] {
				continue
			}
			switch {
			case pinned:
				have[key] = true
				pins = append(pins, text)
			case countWords(text) <= maxHoistWords && durableRe.MatchString(text) &&
				!undecided.MatchString(text) && !strings.HasSuffix(text, "?"):
				have[key] = true
				keyword = append(keyword, text)
			}
		}
	}
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
