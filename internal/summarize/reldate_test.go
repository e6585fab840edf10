package summarize

import "testing"

func TestResolveRelativeDatesAgainstSectionDay(t *testing.T) {
	// 2023-05-25 is a Thursday.
	for _, tc := range []struct{ in, date, want string }{
		{"I went there yesterday.", "2023-05-25", "I went there yesterday (24 May 2023)."},
		{"Tomorrow we ship.", "2023-05-25", "Tomorrow (26 May 2023) we ship."},
		{"I ran a race last Saturday", "2023-05-25", "I ran a race last Saturday (20 May 2023)"},
		{"see you next Thursday", "2023-05-25", "see you next Thursday (1 June 2023)"},
		{"last Thursday it broke", "2023-05-25", "last Thursday (18 May 2023) it broke"},
		{"camping next month", "2023-12-25", "camping next month (January 2024)"},
		{"painted last year", "2023-05-25", "painted last year (2022)"},
		{"started three years ago", "2023-05-25", "started three years ago (2020)"},
		{"two days ago", "2023-03-01", "two days ago (27 February 2023)"},
		{"a talk last week", "2023-05-25", "a talk last week (week of 15 May 2023)"},
		{"hiking last weekend", "2023-05-25", "hiking last weekend (weekend of 20 May 2023)"},
		{"yesterday (24 May 2023) already", "2023-05-25", "yesterday (24 May 2023) already"},
		{"no date known yesterday", "2023-05", "no date known yesterday"},
		{"nothing relative here", "2023-05-25", "nothing relative here"},
		{"the yesterdays", "2023-05-25", "the yesterdays"},
	} {
		if got := resolveRelativeDates(tc.in, tc.date); got != tc.want {
			t.Errorf("resolveRelativeDates(%q, %s) = %q, want %q", tc.in, tc.date, got, tc.want)
		}
	}
}
