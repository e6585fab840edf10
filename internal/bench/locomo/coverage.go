package locomo

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// MemoryText is what a condensed memory file holds for one conversation:
// the whole file (header, pinned, condensed and recent regions, not the
// archive) and its condensed region alone.
type MemoryText struct {
	File      string
	Condensed string
}

// Coverage says how many questions of categories 1-4 have their gold answer
// written in the memory file: the fraction whose normalised answer occurs,
// as whole words, in the normalised file text, and in its condensed region.
type Coverage struct {
	WordBudget int `json:"word_budget"`
	Questions  int `json:"questions"`
	// CondensedWords is the mean number of words in a condensed region.
	CondensedWords float64                     `json:"condensed_words"`
	File           float64                     `json:"file"`
	Condensed      float64                     `json:"condensed"`
	ByCategory     map[string]CoverageCategory `json:"by_category"`
}

// CoverageCategory is the per-category breakdown of Coverage.
type CoverageCategory struct {
	Questions int     `json:"questions"`
	File      float64 `json:"file"`
	Condensed float64 `json:"condensed"`
}

// MeasureCoverage scores every sample with a text in texts (by sample id).
// Questions outside categories 1-4, or whose answer normalises to nothing,
// are not counted.
func MeasureCoverage(samples []Sample, texts map[string]MemoryText, wordBudget int) Coverage {
	c := Coverage{WordBudget: wordBudget, ByCategory: map[string]CoverageCategory{}}
	type tally struct{ n, file, cond int }
	cats := map[int]*tally{}
	var all tally
	words, files := 0, 0
	for _, s := range samples {
		mt, ok := texts[s.ID]
		if !ok {
			continue
		}
		files++
		words += len(strings.Fields(mt.Condensed))
		file := " " + normalizeText(mt.File) + " "
		cond := " " + normalizeText(mt.Condensed) + " "
		for _, q := range s.QA {
			if q.Category < 1 || q.Category > 4 {
				continue
			}
			ans := normalizeText(q.Answer)
			if ans == "" {
				continue
			}
			t := cats[q.Category]
			if t == nil {
				t = &tally{}
				cats[q.Category] = t
			}
			inFile := strings.Contains(file, " "+ans+" ")
			inCond := strings.Contains(cond, " "+ans+" ")
			for _, x := range []*tally{t, &all} {
				x.n++
				if inFile {
					x.file++
				}
				if inCond {
					x.cond++
				}
			}
		}
	}
	frac := func(a, n int) float64 {
		if n == 0 {
			return 0
		}
		return float64(a) / float64(n)
	}
	c.Questions = all.n
	c.File, c.Condensed = frac(all.file, all.n), frac(all.cond, all.n)
	if files > 0 {
		c.CondensedWords = float64(words) / float64(files)
	}
	for k, t := range cats {
		c.ByCategory[strconv.Itoa(k)] = CoverageCategory{Questions: t.n, File: frac(t.file, t.n), Condensed: frac(t.cond, t.n)}
	}
	return c
}

// normalizeText is what coverage compares, on both sides: dates written
// one way (CanonicalDates), then LoCoMo's normalisation.
func normalizeText(s string) string { return NormalizeAnswer(CanonicalDates(s)) }

// monthNames matches a month's name, full or abbreviated.
const monthNames = `(?i:(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?)`

var (
	isoDayRe   = regexp.MustCompile(`\b(\d{4})-(\d{1,2})-(\d{1,2})\b`)
	isoMonthRe = regexp.MustCompile(`\b(\d{4})-(\d{1,2})\b(-\d)?`) // not the start of an impossible day
	// dayMonthRe: "7 May 2023", "7th of May, 2023", "7May, 2023".
	dayMonthRe = regexp.MustCompile(`\b(\d{1,2})(?:st|nd|rd|th)?\s*(?:of\s+)?` + monthNames + `,?\s*(\d{4})\b`)
	// monthDayRe: "May 7, 2023", "May 7th 2023".
	monthDayRe = regexp.MustCompile(`\b` + monthNames + `\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b`)
	// monthYearRe: "May 2023", "May, 2023", "May.2023".
	monthYearRe = regexp.MustCompile(`\b` + monthNames + `[,.]?\s*(\d{4})\b`)
)

// CanonicalDates writes every calendar date of s in one form, "7 May 2023"
// (and a month as "May 2023"), whether it was written "2023-05-07", "May 7,
// 2023", "7th of May, 2023" or "7 May, 2023", so that whether an answer is
// in a text does not depend on how either writes its dates. Dates that name
// no real day are left as they are.
func CanonicalDates(s string) string {
	month := func(name string) (time.Month, bool) {
		name = strings.ToLower(strings.TrimSuffix(name, "."))
		for m := time.January; m <= time.December; m++ {
			if strings.HasPrefix(strings.ToLower(m.String()), name[:min(3, len(name))]) {
				return m, true
			}
		}
		return 0, false
	}
	day := func(y, m, d int) (string, bool) {
		t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
		if m < 1 || m > 12 || t.Day() != d {
			return "", false
		}
		return strconv.Itoa(d) + " " + t.Month().String() + " " + strconv.Itoa(y), true
	}
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	replace := func(re *regexp.Regexp, s string, f func(m []string) (string, bool)) string {
		return re.ReplaceAllStringFunc(s, func(x string) string {
			if out, ok := f(re.FindStringSubmatch(x)); ok {
				return out
			}
			return x
		})
	}
	s = replace(isoDayRe, s, func(m []string) (string, bool) { return day(atoi(m[1]), atoi(m[2]), atoi(m[3])) })
	s = replace(isoMonthRe, s, func(m []string) (string, bool) {
		mo := atoi(m[2])
		if mo < 1 || mo > 12 || m[3] != "" {
			return "", false
		}
		return time.Month(mo).String() + " " + m[1], true
	})
	s = replace(monthDayRe, s, func(m []string) (string, bool) {
		mo, _ := month(m[1])
		return day(atoi(m[3]), int(mo), atoi(m[2]))
	})
	s = replace(dayMonthRe, s, func(m []string) (string, bool) {
		mo, _ := month(m[2])
		return day(atoi(m[3]), int(mo), atoi(m[1]))
	})
	s = replace(monthYearRe, s, func(m []string) (string, bool) {
		mo, _ := month(m[1])
		if mo == 0 {
			return "", false
		}
		return mo.String() + " " + m[2], true
	})
	return s
}

// NormalizeAnswer is LoCoMo's answer normalisation (normalize_answer in its
// evaluation): commas dropped, lower case, ASCII punctuation removed, the
// words a, an, the and "and" removed, white space collapsed.
func NormalizeAnswer(s string) string {
	s = strings.ReplaceAll(s, ",", "")
	s = strings.ToLower(s)
	s = strings.Map(func(r rune) rune {
		if r < 128 && unicode.IsPunct(r) || r < 128 && unicode.IsSymbol(r) {
			return -1
		}
		return r
	}, s)
	fields := strings.Fields(s)
	out := fields[:0]
	for _, f := range fields {
		switch f {
		case "a", "an", "the", "and":
			continue
		}
		out = append(out, f)
	}
	return strings.Join(out, " ")
}
