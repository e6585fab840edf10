// Package purge takes a text out of a whole hivemem home and keeps it out.
//
// A purge is recorded before anything is changed — never the text, only
// its length, a salted SHA-256 and a Rabin-Karp hash (see State) — so that
// a purge killed at any point is finished by the next one, or by the next
// command that opens the home: a rolling hash over every file's bytes
// finds the text again without knowing it. Purged hashes stay as a block
// list (Blocklist.Redact) that writes and imports apply on the way in.
package purge

import (
	"crypto/sha256"
	"encoding/hex"
	"math/bits"
	"slices"
)

// MinLen is the shortest text a purge takes, in bytes: a purge of "the"
// would empty every memory.
const MinLen = 8

// Marker replaces a purged text inside a line that has more than it.
const Marker = "[purged]"

// prime is the Rabin-Karp modulus, 2^61-1.
const prime = 1<<61 - 1

// mulmod is a*b mod 2^61-1 for a, b < 2^61.
func mulmod(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	x := hi<<3 | lo>>61
	x += lo & prime
	for x >= prime {
		x -= prime
	}
	return x
}

// roll is the Rabin-Karp hash of s under base.
func roll(base uint64, s []byte) uint64 {
	var h uint64
	for _, c := range s {
		h = mulmod(h, base) + uint64(c) + 1
		if h >= prime {
			h -= prime
		}
	}
	return h
}

// sum is the salted SHA-256 of s, in hex.
func sum(salt []byte, s []byte) string {
	h := sha256.New()
	h.Write(salt)
	h.Write(s)
	return hex.EncodeToString(h.Sum(nil))
}

// Span is one place a purged text stands: data[Start:End]. Section says
// the text is a purged section's heading: a heading line that is exactly
// it takes its whole section with it.
type Span struct {
	Start, End int
	Section    bool
}

// Matcher finds purged texts by their hashes.
type Matcher struct {
	base  uint64
	salt  []byte
	byLen map[int]map[uint64][]Entry
}

// Empty reports whether there is nothing to find.
func (m *Matcher) Empty() bool { return m == nil || len(m.byLen) == 0 }

func newMatcher(base uint64, salt []byte, entries []Entry) *Matcher {
	m := &Matcher{base: base, salt: salt, byLen: map[int]map[uint64][]Entry{}}
	for _, e := range entries {
		if e.Len <= 0 {
			continue
		}
		t := m.byLen[e.Len]
		if t == nil {
			t = map[uint64][]Entry{}
			m.byLen[e.Len] = t
		}
		t[e.Roll] = append(t[e.Roll], e)
	}
	return m
}

// Find lists every place in data a purged text stands, ordered by start;
// overlapping places are merged.
func (m *Matcher) Find(data []byte) []Span {
	if m.Empty() {
		return nil
	}
	var out []Span
	for l, table := range m.byLen {
		if l > len(data) {
			continue
		}
		// top is base^(l-1), the weight of the byte that leaves the window.
		top := uint64(1)
		for range l - 1 {
			top = mulmod(top, m.base)
		}
		h := roll(m.base, data[:l])
		for i := 0; ; i++ {
			if es, ok := table[h]; ok {
				s := sum(m.salt, data[i:i+l])
				for _, e := range es {
					if e.Sum == s {
						out = append(out, Span{Start: i, End: i + l, Section: e.Section})
						break
					}
				}
			}
			if i+l >= len(data) {
				break
			}
			// Remove data[i], add data[i+l].
			h = (h + prime - mulmod(uint64(data[i])+1, top)) % prime
			h = mulmod(h, m.base) + uint64(data[i+l]) + 1
			if h >= prime {
				h -= prime
			}
		}
	}
	return merge(out)
}

// merge sorts spans and joins the ones that overlap; a merged span is a
// section heading if any of its parts is.
func merge(spans []Span) []Span {
	if len(spans) < 2 {
		return spans
	}
	slices.SortFunc(spans, func(a, b Span) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return b.End - a.End
	})
	out := spans[:1]
	for _, s := range spans[1:] {
		last := &out[len(out)-1]
		if s.Start < last.End {
			last.End = max(last.End, s.End)
			last.Section = last.Section || s.Section
			continue
		}
		out = append(out, s)
	}
	return out
}
