package summarize

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// speakerNames returns the labels the lines of a section open with
// ("Alice: …"), lower-cased: the people of a conversation, whose names in
// the middle of a sentence are mostly someone addressing them.
func speakerNames(lines []string) map[string]bool {
	out := map[string]bool{}
	for _, l := range lines {
		l = strings.TrimSpace(lineTagRe.ReplaceAllString(cleanLine(l), ""))
		if m := leadRe.FindStringSubmatch(l); m != nil && !strings.Contains(m[1], " ") {
			out[strings.ToLower(m[1])] = true
		}
	}
	return out
}

// isSpeaker reports whether w names one of the speakers, or is the start of
// such a name ("Mel" for "Melanie").
func isSpeaker(w string, speakers map[string]bool) bool {
	w = strings.ToLower(w)
	if len(w) < 3 {
		return false
	}
	if speakers[w] {
		return true
	}
	for s := range speakers {
		if strings.HasPrefix(s, w) {
			return true
		}
	}
	return false
}

var (
	// vocativeRe: a name set off by a comma before the end of a clause
	// ("Thanks, Mel!", "I did, Sam."), or opening a sentence ("Sam, …").
	vocativeRe     = regexp.MustCompile(`,\s+([A-Z][\p{L}]+)([!.?…,;]+|$)`)
	vocativeOpenRe = regexp.MustCompile(`^([A-Z][\p{L}]+)[,!]\s+`)
	// fillerRe: words that colour talk and state nothing.
	fillerRe = regexp.MustCompile(`(?i)\b(?:really|just|actually|totally|basically|literally|definitely|honestly|truly|super|very|pretty much|kind of|sort of|kinda|you know,|i think|i guess|i mean,?)\s+`)
)

// compress shortens a sentence of prose to what it states: interjections
// and fillers ("really", "just", "I think"), and the speakers' names used
// to address each other, are dropped; names of anyone else, numbers,
// dates and objects stay. The result keeps the sentence's words in order
// and is never shorter than three words (else s is returned as it is).
func compress(s string, speakers map[string]bool) string {
	if strings.ContainsAny(s, "`/\\") {
		return s // code, paths: copied as they are
	}
	out := vocativeRe.ReplaceAllStringFunc(s, func(m string) string {
		sm := vocativeRe.FindStringSubmatch(m)
		if !isSpeaker(sm[1], speakers) {
			return m
		}
		return sm[2]
	})
	if m := vocativeOpenRe.FindStringSubmatch(out); m != nil && isSpeaker(m[1], speakers) {
		out = out[len(m[0]):]
	}
	out = fillerRe.ReplaceAllString(out, "")
	out = strings.Join(strings.Fields(out), " ")
	out = trimInterjection(out)
	if len(strings.Fields(out)) < 3 {
		return s
	}
	if r, n := utf8.DecodeRuneInString(out); unicode.IsLower(r) && unicode.IsUpper(firstRune(s)) {
		out = string(unicode.ToUpper(r)) + out[n:]
	}
	return out
}

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

// clockRe matches a time of day written before a date ("1:56 pm on 8 May",
// "10:37 am, June 3") in a period line; group 1 is the date's start.
var clockRe = regexp.MustCompile(`(?i)\b\d{1,2}:\d{2}(?::\d{2})?(?:\s*[ap]\.?m\.?)?,?(?:\s+on)?\s+(\d{1,2}\s+\p{L}+|\p{L}+\s+\d{1,2}\b)`)

// dropClockTimes removes from a section heading the time of day given with
// its date: the condensed history is read by the day, and the time costs
// two or three words of the budget on every period line. A time alone
// ("deploy at 09:30") is part of the heading's text and stays.
func dropClockTimes(h string) string {
	return clockRe.ReplaceAllString(h, "$1")
}
