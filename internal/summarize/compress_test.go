package summarize

import "testing"

func TestCompressKeepsFactsDropsTalk(t *testing.T) {
	speakers := speakerNames([]string{"[D1:1] Melanie: Hi!", "Caroline: Hello.", "- Note: not a speaker line? no"})
	for _, tc := range []struct{ in, want string }{
		{"Thanks, Mel! I really just painted a lake sunrise.", "I painted a lake sunrise."},
		{"Caroline, I actually went to Paris, France last May.", "I went to Paris, France last May."},
		{"I moved from Sweden, Caroline.", "I moved from Sweden."},
		{"I met Jean, who helped me.", "I met Jean, who helped me."},
		{"Wow, really great!", "Wow, really great!"}, // under three words left: unchanged
		{"I wanted to let you know I won.", "I wanted to let you know I won."},
		{"Run `just build` in ./cmd, Mel.", "Run `just build` in ./cmd, Mel."}, // code is copied as it is
		{"I think we should switch to Postgres.", "We should switch to Postgres."},
		{"Actually, I took my family camping in the mountains.", "I took my family camping in the mountains."},
		{"Anyway, by the way, the build is green again.", "The build is green again."},
		{"Honestly, Postgres 16 is faster here.", "Postgres 16 is faster here."},
	} {
		if got := compress(tc.in, speakers); got != tc.want {
			t.Errorf("compress(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestOnlyTalkFindsCourtesyWithoutFacts(t *testing.T) {
	speakers := speakerNames([]string{"Melanie: Hi!", "Caroline: Hello."})
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"Thanks, Mel!", true},
		{"Hey Caroline, thanks so much!", true},
		{"You too!", true},
		{"Yes, Caroline!", true},
		{"Thanks, Mell!", true}, // a name set off at the end, even misspelt
		{"Wow, great!", true},
		{"I moved to Sweden, Caroline.", false},
		{"I love Paris, France!", false},
		{"Thanks, Mel, for the Bach partita!", false},
		{"Thanks to Jean for the lift.", false},
		{"See you at 9.", false},
	} {
		if got := onlyTalk(tc.in, speakers); got != tc.want {
			t.Errorf("onlyTalk(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestDropClockTimesKeepsTheDate(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"2023-05-08 — session 1 (1:56 pm on 8 May, 2023)", "2023-05-08 — session 1 (8 May, 2023)"},
		{"2026-09-12 — deploy at 09:30", "2026-09-12 — deploy at 09:30"},
		{"2026-09-12 — standup, 10:37 am, Sept 12", "2026-09-12 — standup, Sept 12"},
		{"2026-09-12 — login test flake", "2026-09-12 — login test flake"},
		{"10:37", "10:37"},
	} {
		if got := dropClockTimes(tc.in); got != tc.want {
			t.Errorf("dropClockTimes(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestDropRepeatedDateKeepsOneDate(t *testing.T) {
	for _, tc := range []struct{ in, date, want string }{
		{"2023-05-08 — session 1 (8 May, 2023)", "2023-05-08", "2023-05-08 — session 1"},
		{"2023-05-08 — session 1 (1:56 pm on 8 May, 2023)", "2023-05-08", "2023-05-08 — session 1"},
		{"2025-07-06 — standup (10:37 am on 6 July, 2025)", "2025-07-06", "2025-07-06 — standup"},
		{"2026-09-12 — standup, Sept 12", "2026-09-12", "2026-09-12 — standup"},
		{"2026-09-12 — May 8th 2023 retro notes", "2026-09-12", "2026-09-12 — May 8th 2023 retro notes"}, // another day
		{"2023-05-08 — session 1 (8 May, 2022)", "2023-05-08", "2023-05-08 — session 1 (8 May, 2022)"},
		{"2023-05-08 — on 8 May the release shipped", "2023-05-08", "2023-05-08 — on 8 May the release shipped"},
		{"2026-09-12 — deploy at 09:30", "2026-09-12", "2026-09-12 — deploy at 09:30"},
		{"2026-09-12 — deploy (12 September) and retro (13 September)", "2026-09-12", "2026-09-12 — deploy and retro (13 September)"},
		{"session 1 (8 May, 2023)", "", "session 1 (8 May, 2023)"}, // no date to compare with
	} {
		if got := dropRepeatedDate(dropClockTimes(tc.in), tc.date); got != tc.want {
			t.Errorf("dropRepeatedDate(%q, %q) = %q, want %q", tc.in, tc.date, got, tc.want)
		}
	}
}
