package mdfence

import (
	"strings"
	"testing"
)

func TestOpener(t *testing.T) {
	tests := []struct {
		line string
		ch   byte
		n    int
		ok   bool
	}{
		{"```", '`', 3, true},
		{"```go", '`', 3, true},
		{"~~~~ sh", '~', 4, true},
		{"   ```", '`', 3, true},
		{"    ```", 0, 0, false}, // four spaces: indented code
		{"\t```", 0, 0, false},   // a tab reaches column 4
		{"``", 0, 0, false},
		{"```go`x", 0, 0, false}, // a backtick in the info string: inline code
		{"~~~ go`x", '~', 3, true},
		{"text ```", 0, 0, false},
		{"", 0, 0, false},
	}
	for _, tt := range tests {
		ch, n, ok := Opener(tt.line)
		if ch != tt.ch || n != tt.n || ok != tt.ok {
			t.Errorf("Opener(%q) = %q, %d, %v; want %q, %d, %v", tt.line, ch, n, ok, tt.ch, tt.n, tt.ok)
		}
		if IsOpener(tt.line) != tt.ok {
			t.Errorf("IsOpener(%q) = %v, want %v", tt.line, !tt.ok, tt.ok)
		}
	}
}

func TestCloses(t *testing.T) {
	tests := []struct {
		line string
		ch   byte
		n    int
		want bool
	}{
		{"```", '`', 3, true},
		{"````", '`', 3, true},
		{"``` \t", '`', 3, true},
		{"```", '`', 4, false}, // shorter than the opening
		{"~~~", '`', 3, false}, // another character
		{"```sh", '`', 3, false},
		{"   ```", '`', 3, true},
		{"    ```", '`', 3, false},
		{"\t```", '`', 3, false},
	}
	for _, tt := range tests {
		if got := Closes(tt.line, tt.ch, tt.n); got != tt.want {
			t.Errorf("Closes(%q, %q, %d) = %v, want %v", tt.line, tt.ch, tt.n, got, tt.want)
		}
	}
}

func TestStepClosesOnlyOnABareRun(t *testing.T) {
	lines := []string{"text", "```go", "## inside", "```sh", "~~~", "````", "after"}
	wantLine := []bool{false, true, false, true, true, true, false}
	wantOpen := []bool{false, true, true, true, true, false, false}
	var s State
	for i, l := range lines {
		if got := s.Step(l); got != wantLine[i] || s.Open() != wantOpen[i] {
			t.Errorf("line %d %q: fence line %v, open %v; want %v, %v", i, l, got, s.Open(), wantLine[i], wantOpen[i])
		}
	}
}

// FuzzCloser: whatever lines came before, the line Closer returns closes
// the fence that is open, and nothing is open without a Closer.
func FuzzCloser(f *testing.F) {
	for _, seed := range []string{"```\n## x", "````\n```\n", "~~~ go`x\ncode", "   ~~~~~\n\t~~~~~", "text"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var s State
		for _, l := range strings.Split(text, "\n") {
			s.Step(l)
		}
		if !s.Open() {
			if s.Closer() != "" {
				t.Fatalf("no fence open, but Closer is %q", s.Closer())
			}
			return
		}
		c := s.Closer()
		if !s.Step(c) || s.Open() {
			t.Fatalf("Closer %q does not close the fence open after %q", c, text)
		}
	})
}
