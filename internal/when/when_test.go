package when

import (
	"strings"
	"testing"
	"time"
)

func TestFindResolvesTimeExpressions(t *testing.T) {
	sat := time.Date(2023, 4, 22, 10, 41, 0, 0, time.UTC) // a Saturday
	wed := time.Date(2023, 3, 1, 9, 0, 0, 0, time.UTC)    // a Wednesday
	for _, tc := range []struct {
		text     string
		ref      time.Time
		from, to string // YYYY-MM-DD
		slack    int
	}{
		{"what did we decide today", sat, "2023-04-22", "2023-04-22", 1},
		{"the error from this morning", sat, "2023-04-22", "2023-04-22", 1},
		{"yesterday's error", sat, "2023-04-21", "2023-04-21", 1},
		{"what broke last night", sat, "2023-04-21", "2023-04-21", 1},
		{"the day before yesterday", sat, "2023-04-20", "2023-04-20", 1},
		{"the build 3 days ago", sat, "2023-04-19", "2023-04-19", 1},
		{"a week ago", sat, "2023-04-15", "2023-04-15", 2},
		{"two weeks ago", sat, "2023-04-08", "2023-04-08", 4},
		{"Four weeks ago", sat, "2023-03-25", "2023-03-25", 7},
		{"twenty one days ago", sat, "2023-04-01", "2023-04-01", 5},
		{"a couple of days ago", sat, "2023-04-20", "2023-04-20", 2},
		{"a few weeks ago", sat, "2023-04-01", "2023-04-01", 10},
		{"a fortnight ago", sat, "2023-04-08", "2023-04-08", 4},
		{"two months ago", sat, "2023-02-22", "2023-02-22", 15},
		{"a year back", sat, "2022-04-22", "2022-04-22", 91},
		{"two days from now", sat, "2023-04-24", "2023-04-24", 1},
		{"one month ago", time.Date(2023, 3, 31, 0, 0, 0, 0, time.UTC), "2023-02-28", "2023-02-28", 8},
		// calendar periods, weeks from Monday
		{"what did we decide last week", sat, "2023-04-10", "2023-04-16", 2},
		{"the week before last", sat, "2023-04-03", "2023-04-09", 2},
		{"this week", sat, "2023-04-17", "2023-04-23", 2},
		{"next week", sat, "2023-04-24", "2023-04-30", 2},
		{"earlier this week", sat, "2023-04-17", "2023-04-21", 2},
		{"earlier this month", sat, "2023-04-01", "2023-04-21", 7},
		{"earlier this month", time.Date(2023, 4, 1, 0, 0, 0, 0, time.UTC), "2023-04-01", "2023-04-01", 7},
		{"last month", sat, "2023-03-01", "2023-03-31", 7},
		{"the month before last", sat, "2023-02-01", "2023-02-28", 7},
		{"last year", sat, "2022-01-01", "2022-12-31", 30},
		// spans up to today, flat inside
		{"in the past two weeks", sat, "2023-04-08", "2023-04-22", 2},
		{"over the last 3 months", sat, "2023-01-22", "2023-04-22", 12},
		{"past two months", sat, "2023-02-22", "2023-04-22", 8},
		{"during the past week", sat, "2023-04-15", "2023-04-22", 1},
		{"this past week", sat, "2023-04-15", "2023-04-22", 1},
		{"the last few days", sat, "2023-04-19", "2023-04-22", 1},
		// weekdays
		{"the music event last Saturday", sat, "2023-04-15", "2023-04-15", 1},
		{"last Saturday", wed, "2023-02-25", "2023-02-25", 1},
		{"last wednesday", wed, "2023-02-22", "2023-02-22", 1},
		{"this past Monday", wed, "2023-02-27", "2023-02-27", 1},
		{"Tuesday before last", wed, "2023-02-21", "2023-02-21", 1},
		{"on the Wednesday two months ago", time.Date(2023, 4, 1, 0, 0, 0, 0, time.UTC), "2023-02-01", "2023-02-01", 1},
		{"on Friday two weeks ago", wed, "2023-02-17", "2023-02-17", 1},
		{"the Thursday of last week", wed, "2023-02-23", "2023-02-23", 1},
		{"last weekend", wed, "2023-02-25", "2023-02-26", 1},
		{"last weekend", sat, "2023-04-15", "2023-04-16", 1},
		{"over the weekend", wed, "2023-02-25", "2023-02-26", 1},
		{"this weekend", wed, "2023-03-04", "2023-03-05", 1},
		// absolute dates; without a year, the latest not after today
		{"what happened on 2023-05-04", sat, "2023-05-04", "2023-05-04", 1},
		{"the 2023/1/9 release", sat, "2023-01-09", "2023-01-09", 1},
		{"on March 3", sat, "2023-03-03", "2023-03-03", 1},
		{"on March 3rd, 2021", sat, "2021-03-03", "2021-03-03", 1},
		{"the 5th of June", sat, "2022-06-05", "2022-06-05", 1},
		{"on 14 Feb", sat, "2023-02-14", "2023-02-14", 1},
		{"on 7 May 2023", sat, "2023-05-07", "2023-05-07", 1},
		{"on 21 May, 2023", sat, "2023-05-21", "2023-05-21", 1},
		{"on October 9, 2022", sat, "2022-10-09", "2022-10-09", 1},
		{"Dec 24", sat, "2022-12-24", "2022-12-24", 1},
		{"on Mar 3rd", sat, "2023-03-03", "2023-03-03", 1},
		{"in May 2023", sat, "2023-05-01", "2023-05-31", 3},
		{"in May", sat, "2022-05-01", "2022-05-31", 3},
		{"during April", sat, "2023-04-01", "2023-04-30", 3},
		{"last April", sat, "2022-04-01", "2022-04-30", 3},
		{"early March", sat, "2023-03-01", "2023-03-10", 3},
		{"mid-March", sat, "2023-03-11", "2023-03-20", 3},
		{"late March", sat, "2023-03-21", "2023-03-31", 3},
		{"since March", sat, "2023-03-01", "2023-04-22", 3},
		{"September 2022", sat, "2022-09-01", "2022-09-30", 3},
		{"in 2021", sat, "2021-01-01", "2021-12-31", 15},
		// spans between two dates: one window, a year written once holds for both
		{"between August 11 and August 15 2023", sat, "2023-08-11", "2023-08-15", 1},
		{"what happened between August 11 and August 15, 2023", sat, "2023-08-11", "2023-08-15", 1},
		{"from August 11 to August 15 2023", sat, "2023-08-11", "2023-08-15", 1},
		{"from August 11, 2023 until August 15", sat, "2023-08-11", "2023-08-15", 1},
		{"between August 11 and 15, 2023", sat, "2023-08-11", "2023-08-15", 1},
		{"from the 11th to the 15th of August 2023", sat, "2023-08-11", "2023-08-15", 1},
		{"from December 28 to January 3 2024", sat, "2023-12-28", "2024-01-03", 1},
		{"between March and May 2022", sat, "2022-03-01", "2022-05-31", 3},
		{"between 2023-01-05 and 2023-01-09", sat, "2023-01-05", "2023-01-09", 1},
		{"between March 3 and March 10", sat, "2023-03-03", "2023-03-10", 1},
		{"from December 20 to January 5", wed, "2022-12-20", "2023-01-05", 1},
		{"between April 20 and April 25", sat, "2023-04-20", "2023-04-25", 1},
		// a time counted from another one: the anchor moved by the amount
		{"a week after March 3", sat, "2023-03-10", "2023-03-10", 2},
		{"two weeks before August 15 2023", sat, "2023-08-01", "2023-08-01", 4},
		{"a week from today", sat, "2023-04-29", "2023-04-29", 2},
		{"two days before yesterday", sat, "2023-04-19", "2023-04-19", 1},
		{"a month before last Saturday", sat, "2023-03-15", "2023-03-15", 8},
		{"3 days after 2023-01-09", sat, "2023-01-12", "2023-01-12", 1},
	} {
		ws := Find(tc.text, tc.ref)
		if len(ws) != 1 {
			t.Errorf("Find(%q) = %d windows %v, want one", tc.text, len(ws), ws)
			continue
		}
		w := ws[0]
		if got := w.From.Format(time.DateOnly); got != tc.from {
			t.Errorf("Find(%q).From = %s, want %s", tc.text, got, tc.from)
		}
		if got := w.To.Format(time.DateOnly); got != tc.to {
			t.Errorf("Find(%q).To = %s, want %s", tc.text, got, tc.to)
		}
		if w.Slack != tc.slack {
			t.Errorf("Find(%q).Slack = %d, want %d", tc.text, w.Slack, tc.slack)
		}
		if w.Text == "" || !strings.Contains(strings.ToLower(tc.text), strings.Fields(w.Text)[0]) {
			t.Errorf("Find(%q).Text = %q, want the expression", tc.text, w.Text)
		}
	}
}

func TestFindIgnoresTextWithoutATime(t *testing.T) {
	ref := time.Date(2023, 4, 22, 0, 0, 0, 0, time.UTC)
	for _, text := range []string{
		"",
		"what database did we pick",
		"how many days ago did I buy the bike", // asks for a count, names no time
		"how many weeks ago was the launch",
		"the last time we met",
		"the last day of the conference",
		"May I ask what the plan is",
		"we will march on",
		"the days before the trip",
		"two days later we left",     // from another event, not from today
		"a week earlier she called",  // same
		"two days before the launch", // counted from an event, not a time
		"on Monday",                  // ahead or behind: unknown
		"on Mondays",                 // every Monday
		"the 5 may help",             // not a date
		"version 2023",               // a number, not a year named as a time
		"999 weeks", "1000 days ago", // not a count of the grammar
		"2023-02-30",   // no such day
		"from 5 to 10", // numbers, no month
	} {
		if ws := Find(text, ref); len(ws) != 0 {
			t.Errorf("Find(%q) = %v, want none", text, ws)
		}
	}
}

func TestFindReturnsEveryExpressionInOrder(t *testing.T) {
	ref := time.Date(2023, 4, 22, 0, 0, 0, 0, time.UTC)
	ws := Find("yesterday, or between 2023-01-05 and last week", ref)
	var got []string
	for _, w := range ws {
		got = append(got, w.Text)
	}
	if strings.Join(got, "|") != "yesterday|2023-01-05|last week" {
		t.Errorf("Find = %q, want yesterday, the ISO date, last week", got)
	}
	// Ends in the wrong order, or centuries apart, are no span: each is
	// its own day.
	for _, text := range []string{"between 2023-05-04 and 2023-01-05", "from 0001-01-01 to 9999-12-31", "from June 9 2023 to June 3"} {
		if ws := Find(text, ref); len(ws) != 2 || ws[0].From != ws[0].To || ws[1].From != ws[1].To {
			t.Errorf("Find(%q) = %v, want its two days apart", text, ws)
		}
	}
	many := strings.Repeat("yesterday ", 50)
	if n := len(Find(many, ref)); n != MaxWindows {
		t.Errorf("Find of 50 expressions = %d windows, want MaxWindows (%d)", n, MaxWindows)
	}
}

func TestFindCountsFromTheReferenceDayInItsLocation(t *testing.T) {
	// 23:30 on the 21st in New York is the 22nd in UTC: "yesterday" is the 20th there.
	ny := time.FixedZone("EDT", -4*3600)
	ref := time.Date(2023, 4, 21, 23, 30, 0, 0, ny)
	ws := Find("yesterday", ref)
	if len(ws) != 1 || ws[0].From.Format(time.DateOnly) != "2023-04-20" {
		t.Errorf("Find(yesterday) as of %v = %v, want 2023-04-20", ref, ws)
	}
}

func TestWindowWeightFallsOffOutside(t *testing.T) {
	d := func(s string) time.Time {
		t, err := time.Parse(time.DateOnly, s)
		if err != nil {
			panic(err)
		}
		return t
	}
	w := Window{From: d("2023-04-08"), To: d("2023-04-22"), Slack: 3}
	for _, tc := range []struct {
		day  string
		want float64
	}{
		{"2023-04-08", 1}, {"2023-04-15", 1}, {"2023-04-22", 1},
		{"2023-04-07", 0.75}, {"2023-04-23", 0.75}, {"2023-04-05", 0.25},
		{"2023-04-04", 0}, {"2023-04-26", 0}, {"2022-04-15", 0},
	} {
		if got := w.Weight(d(tc.day)); got != tc.want {
			t.Errorf("Weight(%s) = %v, want %v", tc.day, got, tc.want)
		}
	}
	if got := w.Centre().Format(time.DateOnly); got != "2023-04-15" {
		t.Errorf("Centre = %s, want 2023-04-15", got)
	}
}

func FuzzFind(f *testing.F) {
	for _, s := range []string{
		"what did we decide last week", "on the Wednesday two months ago", "2023-05-04", "the 5th of June 2021",
		"in the past 400 years", "a couple of a few several weeks ago ago", "last last last", "since may of 2023",
		"twenty twenty days ago", "mid-late-early may", "the day before the day before yesterday", strings.Repeat("9", 5000),
		"between the 15th and 3 of June 2023 from December to January 2199", "from 2023-01-05 through the 9th", "between 0001-01-01 and 9999-12-31",
	} {
		f.Add(s, int64(1682160060))
	}
	f.Fuzz(func(t *testing.T, text string, unix int64) {
		if len(text) > 4096 {
			text = text[:4096]
		}
		ref := time.Unix(unix%(1<<40), 0).UTC()
		ws := Find(text, ref)
		if len(ws) > MaxWindows {
			t.Fatalf("%d windows, more than MaxWindows", len(ws))
		}
		for _, w := range ws {
			if w.To.Before(w.From) || w.Slack < 0 || w.Text == "" {
				t.Fatalf("Find(%q) window %+v: To before From, negative slack or no text", text, w)
			}
			if g := w.Weight(w.From); g != 1 {
				t.Fatalf("Find(%q) window %+v: weight %v at its start, want 1", text, w, g)
			}
			if w.To.After(w.From.AddDate(maxCount+1, 0, 0)) {
				t.Fatalf("Find(%q) window %+v spans more than %d years", text, w, maxCount)
			}
		}
	})
}

// BenchmarkFindLongQuery is Find on a query of the largest size search
// takes (4 KiB) that is dense with near-expressions.
func BenchmarkFindLongQuery(b *testing.B) {
	ref := time.Date(2023, 4, 22, 0, 0, 0, 0, time.UTC)
	unit := "the last a couple of few weeks on the Wednesday of 3rd may in "
	q := strings.Repeat(unit, 4096/len(unit))
	b.SetBytes(int64(len(q)))
	for b.Loop() {
		Find(q, ref)
	}
}
