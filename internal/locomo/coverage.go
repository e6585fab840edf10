package locomo

import (
	"strconv"
	"strings"
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
		file := " " + NormalizeAnswer(mt.File) + " "
		cond := " " + NormalizeAnswer(mt.Condensed) + " "
		for _, q := range s.QA {
			if q.Category < 1 || q.Category > 4 {
				continue
			}
			ans := NormalizeAnswer(q.Answer)
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
