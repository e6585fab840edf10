package dedup

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

type pair struct {
	repeat     bool
	kind, a, b string
}

func readPairs(t testing.TB) []pair {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "pairs.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []pair
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c := strings.Split(line, "\t")
		if len(c) != 4 || (c[0] != "dup" && c[0] != "new") {
			t.Fatalf("bad line %q", line)
		}
		out = append(out, pair{c[0] == "dup", c[1], c[2], c[3]})
	}
	return out
}

// TestPairs holds the rules to the pairs written for them: no changed,
// related or unrelated note is taken for a repeat, every rewording
// (case, punctuation) is; a paraphrase in other words is written (a
// repeat costs a line), which -v counts.
func TestPairs(t *testing.T) {
	found := map[string][2]int{}
	for _, p := range readPairs(t) {
		v := Compare(p.a, p.b)
		t.Logf("%-5v %-12s %-5v (%s): %q / %q", p.repeat, p.kind, v.Repeat, v.Why, p.a, p.b)
		n := found[p.kind]
		n[1]++
		if v.Repeat {
			n[0]++
		}
		found[p.kind] = n
		switch {
		case !p.repeat && v.Repeat:
			t.Errorf("%s pair taken for a repeat (%s): %q / %q", p.kind, v.Why, p.a, p.b)
		case p.kind == "reworded" && !v.Repeat:
			t.Errorf("rewording not taken for a repeat (%s): %q / %q", v.Why, p.a, p.b)
		}
	}
	for k, n := range found {
		t.Logf("%-12s taken for a repeat: %d of %d", k, n[0], n[1])
	}
}

// Every class of changed value makes a new note, and every rewording
// that changes no word beyond glue, inflection, case, punctuation or
// order is a repeat. Each class of change failed before the rule asked
// every word for its counterpart (the stop words held on, off, up, down,
// can, must, before; a cosine took "now … instead" for a paraphrase).
func TestCompareClasses(t *testing.T) {
	tests := []struct {
		class, have, note string
		repeat            bool
	}{
		{"number", "The API rate limit is 600 requests per minute.", "The API rate limit is 1200 requests per minute.", false},
		{"unit", "The cache TTL is 5 minutes.", "The cache TTL is 5 hours.", false},
		{"negation", "The login test is flaky.", "The login test is not flaky.", false},
		{"negation no longer", "The login test is flaky.", "The login test is no longer flaky.", false},
		{"state on/off", "The feature flag for search is on", "The feature flag for search is off", false},
		{"state up/down", "The VPN is up", "The VPN is down", false},
		{"enabled", "Two-factor login is enabled for admins.", "Two-factor login is disabled for admins.", false},
		{"open", "The firewall port for the dashboard is open.", "The firewall port for the dashboard is closed.", false},
		{"before/after", "Run the migration before the deploy.", "Run the migration after the deploy.", false},
		{"modal", "The integration tests must run serially.", "The integration tests can run in parallel.", false},
		{"modal alone", "Interns can merge to main.", "Interns must merge to main.", false},
		{"read-only", "The replica is read-only.", "The replica is read-write.", false},
		{"name", "Alice owns the billing service.", "Bob owns the billing service.", false},
		{"name lower", "The feature flag service is launchdarkly.", "The feature flag service is unleash.", false},
		{"colour", "The deploy runs on the blue cluster", "The deploy now runs on the green cluster instead", false},
		{"colour alone", "The deploy runs on the blue cluster", "The deploy runs on the green cluster", false},
		{"version", "Staging runs PostgreSQL 15.", "Staging runs PostgreSQL 16.", false},
		{"time", "Backups run nightly at 02:00 UTC.", "Backups run nightly at 04:30 UTC.", false},
		{"date", "The freeze starts on March 3.", "The freeze starts on March 10.", false},
		{"weekday", "Never run migrations on Fridays.", "Never run migrations on Mondays.", false},
		{"place", "The primary region is Frankfurt.", "The primary region is Dublin.", false},
		{"place acronym", "Customer data is stored in the EU.", "Customer data is stored in the US.", false},
		{"order of values", "Traffic fails over from eu-west-1 to us-east-2.", "Traffic fails over from us-east-2 to eu-west-1.", false},
		{"added word", "Run migrations on Fridays.", "Run database migrations on Fridays.", false},

		{"case", "Deploy with `make deploy` from the repo root.", "deploy with `make deploy` from the repo root", true},
		{"punctuation", "Alice owns billing; ask her.", "Alice owns billing, ask her!", true},
		{"list marker", "- 📌 db is PostgreSQL 15", "db is PostgreSQL 15", true},
		{"plural", "Never run migrations on Fridays.", "Never run migrations on a Friday.", true},
		{"inflection", "The nightly job runs the backups.", "The nightly job ran the backup.", false}, // tense: another word
		{"article", "Staging database runs PostgreSQL 15.", "The staging database runs PostgreSQL 15.", true},
		{"contraction", "Don't deploy on Fridays.", "Do not deploy on Fridays.", true},
		{"number word", "Code review needs two approvals.", "Code review needs 2 approvals.", true},
		{"order", "On Fridays, never run migrations.", "Never run migrations on Fridays.", true},
		{"glue", "The search flag is on.", "The flag for search is on.", true},
	}
	for _, tt := range tests {
		t.Run(tt.class, func(t *testing.T) {
			for _, p := range [][2]string{{tt.have, tt.note}, {tt.note, tt.have}} {
				if v := Compare(p[0], p[1]); v.Repeat != tt.repeat {
					t.Errorf("Compare(%q, %q) = %+v, want repeat %v", p[0], p[1], v, tt.repeat)
				}
			}
		})
	}
}

func TestCompareSaysWhy(t *testing.T) {
	tests := []struct{ have, note, why string }{
		{"Deploy with `make deploy`.", "deploy with `make deploy`", WhyIdentical},
		{"Alice owns billing; ask her.", "Alice owns billing, so ask her!", WhySameWords},
		{"db is PostgreSQL 15", "db is PostgreSQL 16", WhyValues},
		{"The VPN is up", "The VPN is not up", WhyNegated},
		{"The VPN is up", "The VPN is down", WhyWords},
		{"Move eu-west-1 to us-east-2.", "Move us-east-2 to eu-west-1.", WhyReordered},
	}
	for _, tt := range tests {
		if v := Compare(tt.have, tt.note); v.Why != tt.why {
			t.Errorf("Compare(%q, %q) = %+v, want %s", tt.have, tt.note, v, tt.why)
		}
	}
}

func TestValues(t *testing.T) {
	tests := []struct{ text, want string }{
		{"The staging database runs PostgreSQL 15 on db-stage-2.", "postgresql 15 db-stage-2"},
		{"Deploy with `make deploy` now.", "make deploi"},
		{"Mail jan@papir.cz at 02:00.", "jan@papir.cz 02:00"},
		{"Alice owns it. Bob too.", ""},
		{"Ask Alice before two o'clock.", "alic 2"},
	}
	for _, tt := range tests {
		if g := strings.Join(Values(tt.text), " "); g != tt.want {
			t.Errorf("Values(%q) = %q, want %q", tt.text, g, tt.want)
		}
	}
}

func TestKeysLeaveOutOnlyGlue(t *testing.T) {
	got := slices.Sorted(func(yield func(string) bool) {
		for k := range Keys("The VPN isn't up for us in the US; we can't say why.") {
			if !yield(k) {
				return
			}
		}
	})
	want := []string{"can", "in", "not", "sai", "up", "us", "vpn", "why"}
	if !slices.Equal(got, want) {
		t.Errorf("Keys = %q, want %q", got, want)
	}
}

func ExampleCompare() {
	fmt.Println(Compare("db is PostgreSQL 15", "DB is PostgreSQL 15.").Why)
	fmt.Println(Compare("db is PostgreSQL 15", "db is PostgreSQL 16").Why)
	// Output:
	// identical
	// values differ
}

func TestFindReportsTheRepeat(t *testing.T) {
	cands := []Candidate{
		{"a", "The staging database runs PostgreSQL 16 on db-stage-2."},
		{"b", "Backups of the main database run nightly at 02:00 UTC."},
		{"c", "Lunch orders go to the shared spreadsheet."},
	}
	if got, ok := Find("lunch orders go to the shared spreadsheet", cands); !ok || got.Ref != "c" || got.Why != WhyIdentical {
		t.Errorf("Find of an identical note = %+v, %v", got, ok)
	}
	if got, ok := Find("Backup of the main database runs nightly at 02:00 UTC", cands); !ok || got.Ref != "b" || got.Why != WhySameWords {
		t.Errorf("Find of a rewording = %+v, %v", got, ok)
	}
	if _, ok := Find("The staging database runs PostgreSQL 17 on db-stage-2.", cands); ok {
		t.Error("a changed version was taken for a repeat")
	}
}

func TestRestates(t *testing.T) {
	cands := []Candidate{
		{"flag", "The feature flag for search is on"},
		{"deploy", "The deploy runs on the blue cluster"},
		{"db", "The staging database runs PostgreSQL 15 on db-stage-2."},
		{"lunch", "Lunch orders go to the shared spreadsheet."},
	}
	tests := []struct{ note, want string }{
		{"The feature flag for search is off", "flag"},
		{"The deploy now runs on the green cluster instead", "deploy"},
		{"The staging database runs PostgreSQL 16 on db-stage-2.", "db"},
		{"The production database runs on db-prod-1 with two replicas.", ""},
		{"The office is closed between Christmas and New Year.", ""},
	}
	for _, tt := range tests {
		got, ok := Restates(tt.note, cands)
		if got.Ref != tt.want || ok != (tt.want != "") {
			t.Errorf("Restates(%q) = %q, %v; want %q", tt.note, got.Ref, ok, tt.want)
		}
	}
}
