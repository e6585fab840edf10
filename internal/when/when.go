// Package when finds the time a search query points to — "yesterday",
// "two weeks ago", "last Saturday", "in the past month", "on the Wednesday
// two months ago", "on March 3", "2023-05-04" — and resolves it against
// the moment the query is asked into a window of days, so that search can
// favour memories dated there. It reads English only, and only the
// expressions it is sure of: a query with none gives no window.
//
// The query is untrusted text: Find never panics and does work linear in
// its length.
package when

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Window is a span of days a query points to: every day from From to To
// (both UTC midnights, From not after To) fits fully; a day outside fits
// less the farther it is, down to nothing at more than Slack days away.
// A point in time ("a week ago") is a window of one day whose Slack is
// the uncertainty of the phrase (proportional to how far back it points);
// a span ("the past two weeks", "last month") is flat inside.
type Window struct {
	From, To time.Time
	Slack    int    // days
	Text     string // the expression as found, lower-cased
}

// Weight is how well day (its calendar date in its own location) fits
// the window: 1 inside, falling linearly with the distance in days
// outside, 0 beyond Slack days.
func (w Window) Weight(day time.Time) float64 {
	d := dayOf(day)
	var dist int
	switch {
	case d.Before(w.From):
		dist = daysBetween(d, w.From)
	case d.After(w.To):
		dist = daysBetween(w.To, d)
	}
	if dist > w.Slack {
		return 0
	}
	return 1 - float64(dist)/float64(w.Slack+1)
}

// Centre is the middle day of the window.
func (w Window) Centre() time.Time {
	return w.From.AddDate(0, 0, daysBetween(w.From, w.To)/2)
}

// MaxWindows caps how many expressions Find returns from one text.
const MaxWindows = 8

// Find returns the windows of the time expressions in text, in the order
// they appear, resolved against ref (the moment the text is asked; its
// calendar date in its own location is "today"). It returns nil when text
// names no time.
func Find(text string, ref time.Time) []Window {
	// ISO dates are found in the raw text (the tokenizer splits them) and
	// taken where their first word is.
	iso := map[int]Window{}
	for _, m := range isoMatches(text) {
		y, _ := strconv.Atoi(text[m[2]:m[3]])
		mo, _ := strconv.Atoi(text[m[4]:m[5]])
		d, _ := strconv.Atoi(text[m[6]:m[7]])
		if day, ok := date(y, mo, d); ok {
			iso[m[0]] = Window{From: day, To: day, Slack: 1, Text: text[m[0]:m[1]]}
		}
	}
	toks := tokenize(text)
	p := parser{toks: toks, today: dayOf(ref), iso: iso}
	var out []Window
	for i := 0; i < len(toks) && len(out) < MaxWindows; {
		if w, ok := iso[toks[i].at]; ok {
			out = append(out, w)
			i += 3 // its year, month and day
			continue
		}
		w, n := p.match(i)
		if n == 0 {
			i++
			continue
		}
		w.Text = p.text(i, n)
		out = append(out, w)
		i += n
	}
	return out
}

// isoRE is a date written YYYY-MM-DD or YYYY/MM/DD.
var isoRE = regexp.MustCompile(`\b(\d{4})[-/](\d{1,2})[-/](\d{1,2})\b`)

// isoMatches are isoRE's submatches in text; a text without a dash or a
// slash has none, and is not scanned.
func isoMatches(text string) [][]int {
	if !strings.ContainsAny(text, "-/") {
		return nil
	}
	return isoRE.FindAllStringSubmatchIndex(text, -1)
}

// token is one lower-cased word (letters or digits; an ordinal's suffix
// is dropped: "3rd" is "3", with ord set) and where it starts in the text.
type token struct {
	s   string
	at  int
	ord bool
}

// maxTokenBytes caps a word: nothing the grammar knows is longer, and a
// longer run is kept cut so that no work depends on it.
const maxTokenBytes = 16

func tokenize(text string) []token {
	toks := make([]token, 0, len(text)/6)
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		s := strings.ToLower(text[start:min(end, start+maxTokenBytes)])
		n := trimOrdinal(s)
		toks = append(toks, token{s: n, at: start, ord: n != s})
		start = -1
	}
	for i, r := range text {
		word := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case word && start < 0:
			start = i
		case !word:
			flush(i)
		}
	}
	flush(len(text))
	return toks
}

// trimOrdinal turns "3rd", "21st" into "3", "21".
func trimOrdinal(s string) string {
	for _, suf := range []string{"st", "nd", "rd", "th"} {
		if n, ok := strings.CutSuffix(s, suf); ok && n != "" && allDigits(n) {
			return n
		}
	}
	return s
}

func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// parser matches the grammar at a token.
type parser struct {
	toks  []token
	today time.Time
	iso   map[int]Window // the ISO dates, by the offset of their first word
	// inOffset: the parser reads the time an offset counts from, which is
	// not itself one (so that a chain of them stays linear work).
	inOffset bool
}

// at is the i-th word, "" past the end.
func (p parser) at(i int) string {
	if i < 0 || i >= len(p.toks) {
		return ""
	}
	return p.toks[i].s
}

// is reports whether the words from i are ws.
func (p parser) is(i int, ws ...string) bool {
	for k, w := range ws {
		if p.at(i+k) != w {
			return false
		}
	}
	return true
}

func (p parser) text(i, n int) string {
	ws := make([]string, n)
	for k := range n {
		ws[k] = p.at(i + k)
	}
	return strings.Join(ws, " ")
}

// match tries every rule at word i, most specific first, and returns the
// window and how many words it took (0: none matched).
func (p parser) match(i int) (Window, int) {
	for _, rule := range []func(parser, int) (Window, int){
		parser.span, parser.dayWords, parser.weekdayAgo, parser.ago, parser.offset, parser.rolling,
		parser.calendar, parser.lastWeekday, parser.weekend, parser.monthDay, parser.monthName,
	} {
		if w, n := rule(p, i); n > 0 {
			return w, n
		}
	}
	return Window{}, 0
}

// day is a one-day window n days from today (negative: back).
func (p parser) day(n, slack int) Window {
	d := p.today.AddDate(0, 0, n)
	return Window{From: d, To: d, Slack: slack}
}

// dayWords: today, tonight, this morning, earlier today, yesterday, last
// night, the day before yesterday, tomorrow, the day after tomorrow.
func (p parser) dayWords(i int) (Window, int) {
	switch {
	case p.is(i, "the", "day", "before", "yesterday"):
		return p.day(-2, 1), 4
	case p.is(i, "the", "day", "after", "tomorrow"):
		return p.day(2, 1), 4
	case p.is(i, "today"), p.is(i, "tonight"):
		return p.day(0, 1), 1
	case p.is(i, "this", "morning"), p.is(i, "this", "afternoon"), p.is(i, "this", "evening"):
		return p.day(0, 1), 2
	case p.is(i, "yesterday"):
		return p.day(-1, 1), 1
	case p.is(i, "last", "night"):
		return p.day(-1, 1), 2
	case p.is(i, "tomorrow"):
		return p.day(1, 1), 1
	}
	return Window{}, 0
}

// unit is a length of time a count applies to.
type unit int

const (
	days unit = iota + 1
	weeks
	fortnights
	months
	years
)

func unitOf(s string) unit {
	switch s {
	case "day", "days":
		return days
	case "week", "weeks":
		return weeks
	case "fortnight", "fortnights":
		return fortnights
	case "month", "months":
		return months
	case "year", "years":
		return years
	}
	return 0
}

// back is the day n units before d (after, for negative n); months and
// years keep the day of the month where the month has it, else take its
// last day.
func back(d time.Time, n int, u unit) time.Time {
	switch u {
	case days:
		return d.AddDate(0, 0, -n)
	case weeks:
		return d.AddDate(0, 0, -7*n)
	case fortnights:
		return d.AddDate(0, 0, -14*n)
	case months:
		return addMonths(d, -n)
	default:
		return addMonths(d, -12*n)
	}
}

// addMonths moves d by n months, clamping the day to the month's length.
func addMonths(d time.Time, n int) time.Time {
	first := time.Date(d.Year(), d.Month()+time.Month(n), 1, 0, 0, 0, 0, time.UTC)
	return first.AddDate(0, 0, min(d.Day(), daysIn(first))-1)
}

func daysIn(first time.Time) int {
	return first.AddDate(0, 1, -1).Day()
}

// maxCount caps a count: more than this many units back is no longer a
// time a memory is dated at ("999 years ago").
const maxCount = 400

// count reads a number of units at word i: digits, number words ("two",
// "twenty one"), "a"/"an"/"one", "a couple (of)", "a few", "several". It
// returns the number, whether it is a rough one, and the words taken.
func (p parser) count(i int) (n int, rough bool, took int) {
	w := p.at(i)
	if allDigits(w) && len(w) <= 3 {
		n, _ = strconv.Atoi(w)
		if n < 1 || n > maxCount {
			return 0, false, 0
		}
		return n, false, 1
	}
	switch {
	case p.is(i, "a", "couple", "of"):
		return 2, true, 3
	case p.is(i, "a", "couple"), p.is(i, "couple", "of"):
		return 2, true, 2
	case p.is(i, "a", "few"):
		return 3, true, 2
	case w == "few":
		return 3, true, 1
	case w == "several":
		return 4, true, 1
	case w == "a", w == "an":
		return 1, false, 1
	}
	if v, ok := numberWords[w]; ok {
		if v >= 20 && v%10 == 0 {
			if u, ok := numberWords[p.at(i+1)]; ok && u < 10 {
				return v + u, false, 2
			}
		}
		return v, false, 1
	}
	return 0, false, 0
}

var numberWords = map[string]int{
	"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
	"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
	"seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
	"sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}

// amount reads "<count> <unit>" at word i.
func (p parser) amount(i int) (n int, rough bool, u unit, took int) {
	n, rough, k := p.count(i)
	if k == 0 {
		return 0, false, 0, 0
	}
	if u = unitOf(p.at(i + k)); u == 0 {
		return 0, false, 0, 0
	}
	return n, rough, u, k + 1
}

// slackFor is the uncertainty of a point spanDays back: a share of the
// distance (a rough count, "a few weeks", twice that), at least a day.
func slackFor(spanDays int, rough bool) int {
	s := (spanDays + 2) / 4
	if rough {
		s *= 2
	}
	return max(1, s)
}

// ago: "<count> <unit> ago|back", "<count> <unit> from now". ("Two days
// later" and "a week earlier" are from another event, not from today.)
func (p parser) ago(i int) (Window, int) {
	n, rough, u, k := p.amount(i)
	if k == 0 {
		return Window{}, 0
	}
	sign := 1
	switch p.at(i + k) {
	case "ago", "back":
		k++
	default:
		if !p.is(i+k, "from", "now") {
			return Window{}, 0
		}
		sign, k = -1, k+2
	}
	d := back(p.today, sign*n, u)
	return Window{From: d, To: d, Slack: slackFor(abs(daysBetween(d, p.today)), rough)}, k
}

// offset: "<count> <unit> before|after|from <time>" ("a week after March
// 3", "two days before yesterday", "a week from today"): the time the
// rest names, moved by the amount, less sure the farther it moves. A time
// counted from something that is no time ("two days before the launch")
// is none: the anchor alone would be the wrong day.
func (p parser) offset(i int) (Window, int) {
	if p.inOffset {
		return Window{}, 0
	}
	n, rough, u, k := p.amount(i)
	if k == 0 {
		return Window{}, 0
	}
	sign := 1
	switch p.at(i + k) {
	case "before":
	case "after", "from":
		sign = -1
	default:
		return Window{}, 0
	}
	a := i + k + 1
	w, m := Window{}, 0
	if a < len(p.toks) {
		if iw, ok := p.iso[p.toks[a].at]; ok {
			w, m = iw, 3 // its year, month and day
		}
	}
	if m == 0 {
		q := p
		q.inOffset = true
		if w, m = q.match(a); m == 0 {
			return Window{}, 0
		}
	}
	from, to := back(w.From, sign*n, u), back(w.To, sign*n, u)
	slack := max(w.Slack, slackFor(abs(daysBetween(from, w.From)), rough))
	return Window{From: from, To: to, Slack: slack}, k + 1 + m
}

// weekdayAgo: "(on) (the) <weekday> <count> <unit> ago", and "(on) (the)
// <weekday> (of) last week|month": that weekday nearest the point named.
func (p parser) weekdayAgo(i int) (Window, int) {
	k := 0
	if p.at(i) == "on" {
		k++
	}
	if p.at(i+k) == "the" {
		k++
	}
	wd, ok := weekday(p.at(i + k))
	if !ok {
		return Window{}, 0
	}
	k++
	if p.at(i+k) == "of" || p.at(i+k) == "before" {
		k++
	}
	var centre time.Time
	if p.is(i+k, "last", "week") {
		// that weekday of the previous calendar week
		centre = startOfWeek(p.today).AddDate(0, 0, -7+mondayIndex(wd))
		k += 2
	} else {
		a, n := p.ago(i + k)
		if n == 0 {
			return Window{}, 0
		}
		centre = nearestWeekday(a.From, wd)
		k += n
	}
	return Window{From: centre, To: centre, Slack: 1}, k
}

// rolling: "(in|over|during|within|for) the last|past <count>? <unit>"
// and "past|last <count> <unit>": the span up to today, flat inside.
func (p parser) rolling(i int) (Window, int) {
	k := 0
	if p.at(i) == "the" {
		k = 1
	} else if p.at(i) == "this" && p.at(i+1) == "past" {
		k = 1
	}
	if p.at(i+k) != "last" && p.at(i+k) != "past" {
		return Window{}, 0
	}
	lead := k > 0 || p.at(i) == "past"
	k++
	n, rough, u, took := p.amount(i + k)
	if took == 0 {
		// "the past week": one unit, not a day ("the last day of")
		if !lead || p.at(i+k+1) == "of" {
			return Window{}, 0
		}
		if u = unitOf(p.at(i + k)); u == 0 || u == days {
			return Window{}, 0
		}
		n, took = 1, 1
	}
	k += took
	from := back(p.today, n, u)
	span := daysBetween(from, p.today)
	slack := max(1, span/7)
	if rough {
		slack = max(1, span/4)
	}
	return Window{From: from, To: p.today, Slack: slack}, k
}

// calendar: "last|this|next week|month|year", "earlier|later this
// week|month|year", "the week|month|year before last": calendar periods,
// weeks from Monday.
func (p parser) calendar(i int) (Window, int) {
	k, rel := 0, ""
	switch {
	case p.is(i, "earlier", "this"):
		k, rel = 2, "earlier"
	case p.is(i, "later", "this"):
		k, rel = 2, "later"
	case p.is(i, "the") && p.is(i+2, "before", "last"):
		k, rel = 1, "before last"
	case p.at(i) == "last" || p.at(i) == "previous":
		k, rel = 1, "last"
	case p.at(i) == "this" || p.at(i) == "next":
		k, rel = 1, p.at(i)
	default:
		return Window{}, 0
	}
	u := unitOf(p.at(i + k))
	if u != weeks && u != months && u != years || p.at(i+k) != singular(u) {
		return Window{}, 0
	}
	k++
	if rel == "before last" {
		k += 2
	}
	if p.at(i+k) == "of" && rel != "this" && rel != "earlier" && rel != "later" {
		return Window{}, 0 // "the last week of May": not a period relative to today
	}
	start, end := period(p.today, u)
	var from, to time.Time
	switch rel {
	case "last":
		from = shift(start, u, -1)
		to = shift(start, u, 0).AddDate(0, 0, -1)
	case "before last":
		from = shift(start, u, -2)
		to = shift(start, u, -1).AddDate(0, 0, -1)
	case "next":
		from = shift(start, u, 1)
		to = shift(start, u, 2).AddDate(0, 0, -1)
	case "this":
		from, to = start, end
	case "earlier":
		from, to = start, p.today.AddDate(0, 0, -1)
		if to.Before(from) {
			to = from
		}
	case "later":
		from, to = p.today.AddDate(0, 0, 1), end
		if to.Before(from) {
			from = to
		}
	}
	slack := map[unit]int{weeks: 2, months: 7, years: 30}[u]
	return Window{From: from, To: to, Slack: slack}, k
}

func singular(u unit) string {
	return map[unit]string{weeks: "week", months: "month", years: "year"}[u]
}

// period is the calendar week (from Monday), month or year holding d.
func period(d time.Time, u unit) (start, end time.Time) {
	switch u {
	case weeks:
		start = startOfWeek(d)
	case months:
		start = time.Date(d.Year(), d.Month(), 1, 0, 0, 0, 0, time.UTC)
	default:
		start = time.Date(d.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return start, shift(start, u, 1).AddDate(0, 0, -1)
}

// shift moves the start of a period by n periods.
func shift(start time.Time, u unit, n int) time.Time {
	switch u {
	case weeks:
		return start.AddDate(0, 0, 7*n)
	case months:
		return start.AddDate(0, n, 0)
	default:
		return start.AddDate(n, 0, 0)
	}
}

func startOfWeek(d time.Time) time.Time {
	return d.AddDate(0, 0, -mondayIndex(d.Weekday()))
}

// mondayIndex is the weekday's place in a week from Monday (0) to Sunday (6).
func mondayIndex(wd time.Weekday) int { return (int(wd) + 6) % 7 }

// lastWeekday: "last|this past|(on) <weekday>" before last: the latest
// such day before today ("last Saturday" on a Saturday is a week ago);
// "<weekday> before last" a week before that.
func (p parser) lastWeekday(i int) (Window, int) {
	k := 0
	switch {
	case p.is(i, "this", "past"):
		k = 2
	case p.at(i) == "last" || p.at(i) == "past" || p.at(i) == "previous":
		k = 1
	}
	wd, ok := weekday(p.at(i + k))
	if !ok {
		return Window{}, 0
	}
	before := p.is(i+k+1, "before", "last")
	if k == 0 && !before {
		return Window{}, 0 // a bare weekday may be ahead or behind
	}
	k++
	d := p.today.AddDate(0, 0, -1)
	for d.Weekday() != wd {
		d = d.AddDate(0, 0, -1)
	}
	if before {
		d = d.AddDate(0, 0, -7)
		k += 2
	}
	return Window{From: d, To: d, Slack: 1}, k
}

// weekend: "last|this past weekend", "(over) the weekend": the latest
// Saturday and Sunday not after today; "this weekend" this week's.
func (p parser) weekend(i int) (Window, int) {
	k := 0
	switch {
	case p.is(i, "this", "past", "weekend"):
		k = 3
	case p.is(i, "last", "weekend"), p.is(i, "this", "weekend"), p.is(i, "the", "weekend"):
		k = 2
	default:
		return Window{}, 0
	}
	sat := p.today
	for sat.Weekday() != time.Saturday {
		sat = sat.AddDate(0, 0, -1)
	}
	switch {
	case p.at(i) == "last" && mondayIndex(p.today.Weekday()) >= 5:
		sat = sat.AddDate(0, 0, -7) // on a weekend, "last weekend" is the one before
	case p.is(i, "this", "weekend"):
		sat = startOfWeek(p.today).AddDate(0, 0, 5) // the one of this week, ahead or now
	}
	return Window{From: sat, To: sat.AddDate(0, 0, 1), Slack: 1}, k
}

func weekday(s string) (time.Weekday, bool) {
	d, ok := weekdays[s]
	return d, ok
}

var weekdays = func() map[string]time.Weekday {
	m := map[string]time.Weekday{}
	for d := time.Sunday; d <= time.Saturday; d++ {
		m[strings.ToLower(d.String())] = d
	}
	return m
}()

// nearestWeekday is the day with weekday wd nearest d (ahead on a tie of
// none: the distance is at most three days either way).
func nearestWeekday(d time.Time, wd time.Weekday) time.Time {
	diff := (int(wd) - int(d.Weekday()) + 7) % 7 // 0..6 ahead
	if diff > 3 {
		diff -= 7
	}
	return d.AddDate(0, 0, diff)
}

// month reads a month's name or its abbreviation.
func month(s string) (time.Month, bool) {
	m, ok := monthNames[s]
	return m, ok
}

var monthNames = func() map[string]time.Month {
	m := map[string]time.Month{"sept": time.September}
	for mo := time.January; mo <= time.December; mo++ {
		name := strings.ToLower(mo.String())
		m[name] = mo
		if mo != time.May {
			m[name[:3]] = mo
		}
	}
	return m
}()

// year reads a four-digit year from 1900 to 2199.
func year(s string) (int, bool) {
	if len(s) != 4 || !allDigits(s) {
		return 0, false
	}
	y, _ := strconv.Atoi(s)
	return y, y >= 1900 && y < 2200
}

// calDate is a date as written: a month and a day (0: the whole month),
// and the year when one is written (0: none).
type calDate struct {
	y int
	m time.Month
	d int
}

// first and last are c's first and last day in year y, if it is a real
// date.
func (c calDate) first(y int) (time.Time, bool) {
	if c.d == 0 {
		return time.Date(y, c.m, 1, 0, 0, 0, 0, time.UTC), true
	}
	return date(y, int(c.m), c.d)
}

func (c calDate) last(y int) (time.Time, bool) {
	if c.d == 0 {
		return time.Date(y, c.m+1, 0, 0, 0, 0, 0, time.UTC), true
	}
	return date(y, int(c.m), c.d)
}

// latestYear is the year of c's latest start not after today, looking
// back eight years (a 29 February).
func (p parser) latestYear(c calDate) (int, bool) {
	for y := p.today.Year(); y > p.today.Year()-8; y-- {
		if day, ok := c.first(y); ok && !day.After(p.today) {
			return y, true
		}
	}
	return 0, false
}

// dayMonth reads "<month> <day> (<year>)", "(the) <day> (of) <month>
// (<year>)" at word i.
func (p parser) dayMonth(i int) (calDate, int) {
	var m time.Month
	var d, k int
	if mm, ok := month(p.at(i)); ok && allDigits(p.at(i+1)) && len(p.at(i+1)) <= 2 {
		m, k = mm, 2
		d, _ = strconv.Atoi(p.at(i + 1))
	} else {
		j := i
		if p.at(j) == "the" {
			j++
		}
		if !allDigits(p.at(j)) || len(p.at(j)) > 2 {
			return calDate{}, 0
		}
		d, _ = strconv.Atoi(p.at(j))
		sure := p.toks[j].ord
		j++
		if p.at(j) == "of" {
			j, sure = j+1, true
		}
		mm, ok := month(p.at(j))
		if _, y := year(p.at(j + 1)); y {
			sure = true
		}
		if !ok || !sure && (mm == time.May || mm == time.March) {
			return calDate{}, 0 // "the 5 may help": a verb, not a month
		}
		m, k = mm, j+1-i
	}
	if y, ok := year(p.at(i + k)); ok {
		return calDate{y: y, m: m, d: d}, k + 1
	}
	return calDate{m: m, d: d}, k
}

// monthDay: "<month> <day> (<year>)", "(the) <day> (of) <month> (<year>)":
// that day; without a year, the latest one not after today.
func (p parser) monthDay(i int) (Window, int) {
	c, k := p.dayMonth(i)
	if k == 0 {
		return Window{}, 0
	}
	if c.y == 0 {
		y, ok := p.latestYear(c)
		if !ok {
			return Window{}, 0
		}
		c.y = y
	}
	day, ok := c.first(c.y)
	if !ok {
		return Window{}, 0
	}
	return Window{From: day, To: day, Slack: 1}, k
}

// endpoint reads one end of a span at word i: an ISO date, a day and
// month, a month, or "(the) <day>" (month 0: the other end's), each
// with its year if one is written.
func (p parser) endpoint(i int) (calDate, int) {
	if i < len(p.toks) {
		if w, ok := p.iso[p.toks[i].at]; ok {
			return calDate{y: w.From.Year(), m: w.From.Month(), d: w.From.Day()}, 3
		}
	}
	if c, k := p.dayMonth(i); k > 0 {
		return c, k
	}
	if m, ok := month(p.at(i)); ok {
		if y, ok := year(p.at(i + 1)); ok {
			return calDate{y: y, m: m}, 2
		}
		return calDate{m: m}, 1
	}
	k := 0
	if p.at(i) == "the" {
		k++
	}
	if w := p.at(i + k); allDigits(w) && len(w) <= 2 {
		d, _ := strconv.Atoi(w)
		if y, ok := year(p.at(i + k + 1)); ok {
			return calDate{y: y, d: d}, k + 2
		}
		return calDate{d: d}, k + 1
	}
	return calDate{}, 0
}

// span: "between <date> and <date>", "from <date> to|until|till|through
// <date>", each date an endpoint: one window from the first's start to
// the second's end. A year written at either end holds for the other
// ("between August 11 and August 15 2023"; the first end goes back a
// year if it would fall after the second, "from December 28 to January
// 3 2024"), a day without a month is in the other end's ("from the 11th
// to the 15th of August"); without any year, the first end is the latest
// not after today. Ends in the wrong order, or more than maxCount years
// apart, are no span.
func (p parser) span(i int) (Window, int) {
	var seps []string
	switch p.at(i) {
	case "between":
		seps = []string{"and"}
	case "from":
		seps = []string{"to", "until", "till", "through"}
	default:
		return Window{}, 0
	}
	a, ka := p.endpoint(i + 1)
	if ka == 0 || !slices.Contains(seps, p.at(i+1+ka)) {
		return Window{}, 0
	}
	b, kb := p.endpoint(i + 2 + ka)
	if kb == 0 {
		return Window{}, 0
	}
	switch {
	case a.m == 0 && b.m == 0, a.m == 0 && b.d == 0, b.m == 0 && a.d == 0:
		return Window{}, 0 // no month, or a day against a whole month
	case a.m == 0:
		a.m = b.m
	case b.m == 0:
		b.m = a.m
	}
	// A first end in a later month than the second is in the year before.
	switch {
	case a.y == 0 && b.y == 0:
		y, ok := p.latestYear(a)
		if !ok {
			return Window{}, 0
		}
		a.y, b.y = y, y
		if a.m > b.m {
			b.y++
		}
	case a.y == 0:
		a.y = b.y
		if a.m > b.m {
			a.y--
		}
	case b.y == 0:
		b.y = a.y
		if a.m > b.m {
			b.y++
		}
	}
	from, ok := a.first(a.y)
	to, ok2 := b.last(b.y)
	if !ok || !ok2 || to.Before(from) || to.After(from.AddDate(maxCount, 0, 0)) {
		return Window{}, 0
	}
	slack := 1
	if a.d == 0 || b.d == 0 {
		slack = 3
	}
	return Window{From: from, To: to, Slack: slack}, 2 + ka + kb
}

// monthName: "<month> <year>", and "in|during|of|since|early|mid|late|last
// <month> (<year>)": that month (since: from it to today) (a part of it: early is days 1–10, mid
// 11–20, late 21 on); without a year, the latest not after today's month
// ("last May" in May is the year before); "in|during <year>": that year.
func (p parser) monthName(i int) (Window, int) {
	lead, k := "", 0
	switch w := p.at(i); w {
	case "in", "during", "since", "early", "mid", "late", "last", "throughout", "of":
		lead, k = w, 1
	}
	if y, ok := year(p.at(i + k)); ok && (lead == "in" || lead == "during" || lead == "throughout") {
		from := time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
		return Window{From: from, To: from.AddDate(1, 0, -1), Slack: 15}, k + 1
	}
	m, ok := month(p.at(i + k))
	if !ok {
		return Window{}, 0
	}
	k++
	if p.at(i+k) == "of" {
		if _, ok := year(p.at(i + k + 1)); ok {
			k++
		}
	}
	y, hasYear := year(p.at(i + k))
	switch {
	case hasYear:
		k++
	case lead == "":
		return Window{}, 0 // a bare month name ("may", "march") is too often a word
	default:
		y = p.today.Year()
		if m > p.today.Month() || lead == "last" && m == p.today.Month() {
			y--
		}
	}
	from := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
	to := from.AddDate(0, 1, -1)
	switch lead {
	case "early":
		to = from.AddDate(0, 0, 9)
	case "mid":
		from, to = from.AddDate(0, 0, 10), from.AddDate(0, 0, 19)
	case "late":
		from = from.AddDate(0, 0, 20)
	case "since":
		if p.today.After(to) {
			to = p.today
		}
	}
	return Window{From: from, To: to, Slack: 3}, k
}

// date is the calendar date y-m-d, if it is a real one.
func date(y, m, d int) (time.Time, bool) {
	if m < 1 || m > 12 || d < 1 || y < 1 || y > 9999 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	return t, t.Day() == d
}

// dayOf is t's calendar date in its own location, as a UTC midnight.
func dayOf(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// daysBetween is the whole days from a to b (UTC midnights).
func daysBetween(a, b time.Time) int {
	return int(b.Sub(a).Round(time.Hour).Hours() / 24)
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
