package summarize

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// relDateRe matches the relative time expressions resolveRelativeDates
// knows. An expression already followed by a parenthesis is left alone (it
// was resolved by an earlier condensation, or by its writer).
var relDateRe = regexp.MustCompile(`(?i)\b(yesterday|tomorrow|` +
	`(?:last|next) (?:week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|` +
	`(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d{1,2}) (?:days?|weeks?|months?|years?) ago)\b`)

var numberWords = map[string]int{"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
	"six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}

// resolveRelativeDates writes, after each relative time expression of s
// ("yesterday", "last week", "next month", "three years ago", "last
// Saturday"), the date it means as seen from the day the section is dated
// (YYYY-MM-DD), in parentheses: "yesterday (7 May 2023)", "last year
// (2022)", "next month (June 2023)", "last week (week of 1 May 2023)". A
// reader of the condensed history, long after, no longer knows what
// "yesterday" was. Without a full date, s is returned as it is.
func resolveRelativeDates(s, date string) string {
	day, err := time.Parse(time.DateOnly, date)
	if err != nil {
		return s
	}
	locs := relDateRe.FindAllStringSubmatchIndex(s, -1)
	if locs == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, l := range locs {
		b.WriteString(s[last:l[1]])
		last = l[1]
		if strings.HasPrefix(strings.TrimLeft(s[l[1]:], " "), "(") {
			continue
		}
		if abs := absoluteDate(strings.ToLower(s[l[2]:l[3]]), day); abs != "" {
			b.WriteString(" (" + abs + ")")
		}
	}
	b.WriteString(s[last:])
	return b.String()
}

// absoluteDate is what one relative expression means on day.
func absoluteDate(expr string, day time.Time) string {
	dayStr := func(t time.Time) string { return fmt.Sprintf("%d %s %d", t.Day(), t.Month(), t.Year()) }
	monthStr := func(t time.Time) string { return fmt.Sprintf("%s %d", t.Month(), t.Year()) }
	// monday is the Monday of day's week (weeks start on Monday).
	monday := day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
	firstOfMonth := time.Date(day.Year(), day.Month(), 1, 0, 0, 0, 0, time.UTC)
	switch expr {
	case "yesterday":
		return dayStr(day.AddDate(0, 0, -1))
	case "tomorrow":
		return dayStr(day.AddDate(0, 0, 1))
	case "last week":
		return "week of " + dayStr(monday.AddDate(0, 0, -7))
	case "next week":
		return "week of " + dayStr(monday.AddDate(0, 0, 7))
	case "last weekend":
		return "weekend of " + dayStr(monday.AddDate(0, 0, -2))
	case "next weekend":
		return "weekend of " + dayStr(monday.AddDate(0, 0, 5))
	case "last month":
		return monthStr(firstOfMonth.AddDate(0, -1, 0))
	case "next month":
		return monthStr(firstOfMonth.AddDate(0, 1, 0))
	case "last year":
		return fmt.Sprint(day.Year() - 1)
	case "next year":
		return fmt.Sprint(day.Year() + 1)
	}
	f := strings.Fields(expr)
	if len(f) == 2 {
		for wd := time.Sunday; wd <= time.Saturday; wd++ {
			if f[1] != strings.ToLower(wd.String()) {
				continue
			}
			// "last Saturday": the latest Saturday before day; "next
			// Saturday": the first one after it.
			d := (int(day.Weekday()) - int(wd) + 7) % 7
			if f[0] == "last" {
				if d == 0 {
					d = 7
				}
				return dayStr(day.AddDate(0, 0, -d))
			}
			if d = (int(wd) - int(day.Weekday()) + 7) % 7; d == 0 {
				d = 7
			}
			return dayStr(day.AddDate(0, 0, d))
		}
		return ""
	}
	if len(f) != 3 || f[2] != "ago" {
		return ""
	}
	n, ok := numberWords[f[0]]
	if !ok {
		if _, err := fmt.Sscan(f[0], &n); err != nil || n <= 0 {
			return ""
		}
	}
	switch strings.TrimSuffix(f[1], "s") {
	case "day":
		return dayStr(day.AddDate(0, 0, -n))
	case "week":
		return "week of " + dayStr(monday.AddDate(0, 0, -7*n))
	case "month":
		return monthStr(firstOfMonth.AddDate(0, -n, 0))
	case "year":
		return fmt.Sprint(day.Year() - n)
	}
	return ""
}
