// Command testsummary runs `go test -json` with the given arguments and
// prints what plain `go test` prints (the "ok" and "FAIL" line of each
// package, the output of failing tests, build errors), then a summary of
// every skipped test with its reason, so that a run whose tests skipped
// whole areas does not look like a full pass, and last the packages that
// failed with their failing tests, so that the end of a long run says
// what to look at. It exits with go test's status.
//
// Usage: go run ./scripts/testsummary [go test flags] [packages]
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action      string
	Package     string
	Test        string
	Output      string
	ImportPath  string // build-output
	FailedBuild string // a package's fail: the package that did not build
}

func main() {
	gotest := exec.Command("go", append([]string{"test", "-json"}, os.Args[1:]...)...)
	gotest.Stderr = os.Stderr
	out, err := gotest.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	if err := gotest.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary: go test:", err)
		os.Exit(2)
	}
	s := newSummary(os.Stdout)
	if err := s.read(out); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
	}
	werr := gotest.Wait()
	s.printSkips()
	s.printFailures()
	var ee *exec.ExitError
	switch {
	case errors.As(werr, &ee):
		os.Exit(ee.ExitCode())
	case werr != nil:
		fmt.Fprintln(os.Stderr, "testsummary: go test:", werr)
		os.Exit(2)
	case s.failed:
		os.Exit(1)
	}
}

type key struct{ pkg, test string }

type skip struct {
	key
	reason string
}

type summary struct {
	w      io.Writer
	buf    map[key][]string // output of a running test
	skips  []skip
	failed bool
	// failures are the packages that failed, in the order they did, with
	// their failed tests (or why the package failed without one).
	failures []failure
}

// failure is a package that failed and the tests in it that did.
type failure struct {
	pkg   string
	tests []string
	why   string // when no test failed: "build failed", ...
}

func newSummary(w io.Writer) *summary { return &summary{w: w, buf: map[key][]string{}} }

func (s *summary) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			// Not an event (go test prints some errors as plain text).
			fmt.Fprintf(s.w, "%s\n", line)
			continue
		}
		s.event(e)
	}
	return sc.Err()
}

func (s *summary) event(e event) {
	k := key{e.Package, e.Test}
	switch e.Action {
	case "build-output":
		fmt.Fprint(s.w, e.Output)
	case "output":
		if e.Test == "" {
			// The package's own lines: "ok", "FAIL", "--- FAIL" of a
			// fuzz seed, panics. Plain go test drops the bare "PASS".
			if e.Output != "PASS\n" {
				fmt.Fprint(s.w, e.Output)
			}
			return
		}
		if !strings.HasPrefix(e.Output, "=== ") {
			s.buf[k] = append(s.buf[k], e.Output)
		}
	case "fail":
		if e.Test != "" {
			s.failed = true
			fmt.Fprint(s.w, strings.Join(s.buf[k], ""))
			s.failedTest(e.Package, e.Test)
		} else {
			s.failedPackage(e)
		}
		delete(s.buf, k)
	case "skip":
		if e.Test != "" {
			s.skips = append(s.skips, skip{k, reason(s.buf[k])})
		}
		delete(s.buf, k)
	case "pass":
		delete(s.buf, k)
	}
}

// reason is what a skipped test logged, without its "--- SKIP" line and
// the "file.go:12: " prefix of t.Skip.
func reason(lines []string) string {
	var parts []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "--- SKIP") {
			continue
		}
		parts = append(parts, logPrefix.ReplaceAllString(l, ""))
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " ")
}

var logPrefix = regexp.MustCompile(`^[\w.-]+\.go:\d+: `)

// printSkips prints the skipped tests grouped by reason, the most common
// reason first.
func (s *summary) printSkips() {
	if len(s.skips) == 0 {
		fmt.Fprintln(s.w, "no tests skipped")
		return
	}
	byReason := map[string][]string{}
	for _, sk := range s.skips {
		name := shortPkg(sk.pkg) + " " + sk.test
		byReason[sk.reason] = append(byReason[sk.reason], name)
	}
	reasons := make([]string, 0, len(byReason))
	for r := range byReason {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool {
		a, b := byReason[reasons[i]], byReason[reasons[j]]
		if len(a) != len(b) {
			return len(a) > len(b)
		}
		return reasons[i] < reasons[j]
	})
	fmt.Fprintf(s.w, "\n%s skipped:\n", plural(len(s.skips), "test"))
	for _, r := range reasons {
		names := byReason[r]
		sort.Strings(names)
		list := names
		if len(list) > 4 {
			list = append(list[:4:4], fmt.Sprintf("and %d more", len(names)-4))
		}
		fmt.Fprintf(s.w, "  %3d  %s\n       (%s)\n", len(names), r, strings.Join(list, ", "))
	}
}

// failedTest notes test of pkg as failed (a subtest as well as its
// parent: the subtest says which case).
func (s *summary) failedTest(pkg, test string) {
	f := s.failure(pkg)
	f.tests = append(f.tests, test)
}

// failedPackage notes the package of e, which failed: with no test failed
// in it, because it did not build or its test binary failed on its own.
func (s *summary) failedPackage(e event) {
	s.failed = true
	f := s.failure(e.Package)
	switch {
	case e.FailedBuild != "":
		f.why = "build failed"
	case len(f.tests) == 0:
		f.why = "no test failed: see the package's output above"
	}
}

// failure is pkg's entry in s.failures, added when it is not there yet.
func (s *summary) failure(pkg string) *failure {
	for i := range s.failures {
		if s.failures[i].pkg == pkg {
			return &s.failures[i]
		}
	}
	s.failures = append(s.failures, failure{pkg: pkg})
	return &s.failures[len(s.failures)-1]
}

// printFailures prints the packages that failed, each with its failed
// tests (innermost first, the first four), as the run's last lines.
func (s *summary) printFailures() {
	if len(s.failures) == 0 {
		return
	}
	fmt.Fprintf(s.w, "\n%s failed:\n", plural(len(s.failures), "package"))
	for _, f := range s.failures {
		line := "  FAIL " + shortPkg(f.pkg)
		switch {
		case len(f.tests) > 0:
			tests := leafTests(f.tests)
			if len(tests) > 4 {
				tests = append(tests[:4:4], fmt.Sprintf("and %d more", len(tests)-4))
			}
			line += " (" + strings.Join(tests, ", ") + ")"
		case f.why != "":
			line += " (" + f.why + ")"
		}
		fmt.Fprintln(s.w, line)
	}
}

// leafTests are the failed tests without the parents of failed subtests,
// which failed because of them.
func leafTests(tests []string) []string {
	var out []string
	for _, t := range tests {
		parent := false
		for _, u := range tests {
			if strings.HasPrefix(u, t+"/") {
				parent = true
				break
			}
		}
		if !parent {
			out = append(out, t)
		}
	}
	return out
}

// shortPkg is pkg without this module's path.
func shortPkg(pkg string) string { return strings.TrimPrefix(pkg, "github.com/hivemem/hivemem/") }

// plural is n and word, with an "s" unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
