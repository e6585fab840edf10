package reflector

import (
	"fmt"

	"github.com/hivemem/hivemem/internal/memfile"
)

// plan is one condensation of one parsed file: which ordinary sections go
// to the archive (the oldest) and which stay verbatim (the newest).
type plan struct {
	file    *memfile.File
	evicted []memfile.Section
	kept    []memfile.Section
}

// newPlan splits f's ordinary sections: the newest keep stay, the rest are
// evicted. Region sections are never evicted; they are rebuilt.
func newPlan(f *memfile.File, keep int) plan {
	ordinary := f.Recent()
	n := max(len(ordinary)-max(keep, 1), 0)
	return plan{file: f, evicted: ordinary[:n], kept: ordinary[n:]}
}

// replan applies the eviction decided on the file read first to the file
// read again just before the swap (the same bytes plus whatever agents
// appended). The summary was made from the first read, so the second must
// start with the very same evicted sections and the same condensed history;
// anything else means the file changed under us in a way we cannot carry.
func replan(f *memfile.File, first plan) (plan, error) {
	ordinary := f.Recent()
	n := len(first.evicted)
	if len(ordinary) < n {
		return plan{}, fmt.Errorf("file now has %d ordinary sections, fewer than the %d being evicted", len(ordinary), n)
	}
	for i, s := range first.evicted {
		if ordinary[i].Raw != s.Raw {
			return plan{}, fmt.Errorf("evicted section %q changed", s.Heading)
		}
	}
	if f.Condensed() != first.file.Condensed() {
		return plan{}, fmt.Errorf("condensed history changed")
	}
	return plan{file: f, evicted: ordinary[:n], kept: ordinary[n:]}, nil
}

// raws returns the evicted sections' exact bytes, oldest first.
func (p plan) raws() []string {
	out := make([]string, len(p.evicted))
	for i, s := range p.evicted {
		out[i] = s.Raw
	}
	return out
}

// toSummarise returns the evicted sections the summary is made of: those
// not marked superseded ("> superseded by:"), whose outdated text stays
// verbatim in the archive (searchable with --include-superseded) but is
// not carried into the condensed history as if it still held. When every
// evicted section is superseded they all go, so the summary is not empty.
func (p plan) toSummarise() []string {
	var out []string
	for _, s := range p.evicted {
		if s.SupersededBy == "" {
			out = append(out, s.Raw)
		}
	}
	if len(out) == 0 {
		return p.raws()
	}
	return out
}

// rebuiltFacts returns the facts of every part of the file that the
// rebuild rewrites: the pinned regions, 📌 lines in condensed regions (the
// condensed text is replaced) and 📌 lines in evicted sections (which
// leave the file). Header, recent body and kept sections are written back
// verbatim, so their 📌 lines stay where they are.
func (p plan) rebuiltFacts() []string {
	evicted := make(map[int]bool, len(p.evicted))
	for _, s := range p.evicted {
		evicted[s.StartLine] = true
	}
	var secs []memfile.Section
	for _, s := range p.file.Sections {
		if s.Kind == memfile.KindPinned || s.Kind == memfile.KindCondensed || (s.Kind == memfile.KindSection && evicted[s.StartLine]) {
			secs = append(secs, s)
		}
	}
	return (&memfile.File{Sections: secs}).Pinned()
}

// regionFacts returns the facts of the pinned regions only (what the file
// already had pinned), to count what a condensation hoisted.
func (p plan) regionFacts() []string {
	var secs []memfile.Section
	for _, s := range p.file.Sections {
		if s.Kind == memfile.KindPinned {
			secs = append(secs, s)
		}
	}
	return (&memfile.File{Sections: secs}).Pinned()
}

// build renders the condensed file: header unchanged; pinned = the facts of
// the rewritten parts plus the summariser's hoist (normalised dedup);
// condensed = the summary; the recent body and kept sections verbatim.
func (p plan) build(condensed string, hoist []string) []byte {
	facts := append(p.rebuiltFacts(), hoist...)
	return memfile.Build(p.file.Header, facts, condensed, p.file.RecentBody(), p.kept)
}

// hoisted counts the facts in nf's pinned region that the file did not
// have pinned before: 📌 lines lifted out of evicted or condensed text and
// facts the summariser hoisted.
func (p plan) hoisted(nf *memfile.File) int {
	before := map[string]bool{}
	for _, f := range p.regionFacts() {
		before[memfile.NormalizeFact(f)] = true
	}
	n := 0
	for _, f := range (plan{file: nf}).regionFacts() {
		if !before[memfile.NormalizeFact(f)] {
			n++
		}
	}
	return n
}
