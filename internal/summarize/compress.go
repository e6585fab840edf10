package summarize

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
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
	fillerRe = regexp.MustCompile(`(?i)\b(?:really|just|actually|totally|basically|literally|definitely|honestly|truly|super|very|pretty much|kind of|sort of|kinda|you know,|i think|i guess|i mean),?\s+`)
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

// onlyTalk reports whether a sentence says nothing but courtesy: no number
// and no word in it but stop words, interjections and names used to
// address someone — a speaker's, or any name set off by a comma at the end
// ("Thanks, Mel!", "Yes, Caroline!", "Hi Sam!", "You too!").
func onlyTalk(s string, speakers map[string]bool) bool {
	if numbers(s) > 0 {
		return false
	}
	s = vocativeRe.ReplaceAllString(s, "$2")
	for _, w := range contentWords(s) {
		if !isSpeaker(w, speakers) && !slices.Contains(interjections, w) {
			return false
		}
	}
	return true
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

// monthPattern matches a month's name, full or abbreviated ("Sept").
const monthPattern = `(?i:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?`

// writtenDateRe matches a date written in words, with the time of day
// before it if there is one: "8 May, 2023", "May 8th 2023", "Sept 12",
// "1:56 pm on 8 May, 2023".
var writtenDateRe = regexp.MustCompile(`(?:\b\d{1,2}:\d{2}(?::\d{2})?(?:\s*[ap]\.?m\.?)?,?(?:\s+on)?\s+)?` +
	`(?:\b(\d{1,2})(?:st|nd|rd|th)?(?:\s+of)?\s+(` + monthPattern + `)|(` + monthPattern + `)\s+(\d{1,2})(?:st|nd|rd|th)?\b)(?:,?\s+(\d{4}))?\b`)

// dropRepeatedDate removes from a section heading the date it already
// starts with when it is written again in words, apart — in parentheses
// or last after a comma or a dash ("2023-05-08 — session 1 (8 May, 2023)"
// → "2023-05-08 — session 1") — with its time of day: the period line keeps
// its date once, and the words it saves on every period line go to what
// the period said. Another date, or one that is part of the heading's
// words, stays.
func dropRepeatedDate(h, date string) string {
	day, err := time.Parse(time.DateOnly, date)
	if err != nil {
		return h
	}
	for _, l := range slices.Backward(writtenDateRe.FindAllStringSubmatchIndex(h, -1)) {
		g := func(i int) string {
			if l[2*i] < 0 {
				return ""
			}
			return h[l[2*i]:l[2*i+1]]
		}
		d, mon, year := g(1), g(2), g(5)
		if d == "" {
			d, mon = g(4), g(3)
		}
		if year != "" && year != fmt.Sprint(day.Year()) || d != fmt.Sprint(day.Day()) ||
			!strings.HasPrefix(strings.ToLower(day.Month().String()), strings.ToLower(strings.TrimSuffix(mon, "."))[:3]) {
			continue
		}
		before, after := strings.TrimRight(h[:l[0]], " "), strings.TrimLeft(h[l[1]:], " ")
		switch {
		case strings.HasSuffix(before, "(") && strings.HasPrefix(after, ")"):
			before, after = strings.TrimSuffix(before, "("), after[1:]
		case after == "" && strings.ContainsAny(lastRune(before), ",;:—–-"):
			before = strings.TrimRight(before, ",;:—–- ")
		default:
			continue
		}
		h = strings.TrimRight(before, " ") + " " + strings.TrimLeft(after, " ")
	}
	return strings.Join(strings.Fields(h), " ")
}

func lastRune(s string) string {
	r, _ := utf8.DecodeLastRuneInString(s)
	return string(r)
}
