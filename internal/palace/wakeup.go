package palace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/dustin/go-humanize"
	"github.com/dustin/go-humanize/english"

	"github.com/hivemem/hivemem/internal/chunk"
	"github.com/hivemem/hivemem/internal/dedup"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/store"
)

// DefaultWakeUpBudget is the digest's size in estimated tokens.
const DefaultWakeUpBudget = 800

// MaxWakeUpBudget is the largest budget WakeUp takes, in estimated tokens.
const MaxWakeUpBudget = 100000

// Digest is a wake-up: what a new session should know first.
type Digest struct {
	Wing   string   `json:"wing,omitempty"`
	Budget int      `json:"budget"`
	Tokens int      `json:"tokens"`
	Pinned []string `json:"pinned,omitempty"`
	// Restated are the pinned facts (of Pinned) that a later pinned fact
	// states again with something changed: outdated, unless both hold.
	Restated  []string     `json:"restated_pinned,omitempty"`
	Condensed string       `json:"condensed,omitempty"`
	Recent    []RecentItem `json:"recent,omitempty"`
	Agents    []AgentLine  `json:"agents,omitempty"`
	Truncated bool         `json:"truncated"`
	Text      string       `json:"text"`
}

// RecentItem is a recent section's heading and first line.
type RecentItem struct {
	Heading   string `json:"heading"`
	FirstLine string `json:"first_line"`
	Date      string `json:"date,omitempty"`
	Line      int    `json:"line"`
	// RestatedIn is the heading of a newer section that states this
	// one's subject again with something changed ("" for none).
	RestatedIn string `json:"restated_in,omitempty"`
}

// AgentLine is the one-line summary of an agent in a hive-wide wake-up.
type AgentLine struct {
	Agent    string `json:"agent"`
	Bytes    int64  `json:"bytes"`
	Sections int    `json:"sections"`
	Pinned   int    `json:"pinned"`
	Newest   string `json:"newest,omitempty"`
}

// WakeUp builds the digest for a wing (an agent) straight from its memory
// file — pinned facts, condensed history, then the newest sections' headings
// with their first lines — cut to the token budget in that order of
// priority. A section marked superseded is not among the newest; the one
// that replaces it is, with the first line of its note (its marker left
// out). With no wing it gives one line per agent: its sections (all of
// them, as status counts), pinned facts, size and newest current section. The budget is in
// estimated tokens, 1 to MaxWakeUpBudget; 0 means DefaultWakeUpBudget, and
// a negative budget is an error.
func (p *Palace) WakeUp(ctx context.Context, wing string, budget int) (Digest, error) {
	switch {
	case budget < 0:
		return Digest{}, fmt.Errorf("wake-up: budget %d is negative (want 1 to %d tokens, or 0 for the default)", budget, MaxWakeUpBudget)
	case budget == 0:
		budget = DefaultWakeUpBudget
	case budget > MaxWakeUpBudget:
		return Digest{}, fmt.Errorf("wake-up: budget %d is too large (at most %d tokens)", budget, MaxWakeUpBudget)
	}
	if wing == "" {
		return p.wakeUpHive(ctx, budget)
	}
	path, err := p.memoryForWing(ctx, wing)
	if err != nil {
		return Digest{}, err
	}
	data, err := p.readFile(path)
	if err != nil {
		return Digest{}, fmt.Errorf("wake-up %s: %w", wing, err)
	}
	mf, err := memfile.Parse(data)
	if err != nil {
		return Digest{}, fmt.Errorf("wake-up %s: %w", wing, err)
	}
	d := Digest{Wing: wing, Budget: budget}
	var b strings.Builder
	used := 0
	emit := func(s string) bool {
		t := chunk.EstimateTokens(s)
		if used+t > budget {
			d.Truncated = true
			return false
		}
		b.WriteString(s)
		used += t
		return true
	}
	emit("# Wake-up — " + wing + "\n")
	if facts := mf.Pinned(); len(facts) > 0 {
		emit("\n## Pinned facts\n")
		for i, f := range facts {
			line := "- " + f
			restated := slices.ContainsFunc(facts[i+1:], func(later string) bool { return dedup.Outdates(f, later) })
			if restated {
				line += " (a later pinned fact restates this)"
			}
			if !emit(line + "\n") {
				break
			}
			d.Pinned = append(d.Pinned, f)
			if restated {
				d.Restated = append(d.Restated, f)
			}
		}
	}
	if c := mf.Condensed(); c != "" {
		// The condensed history may take what is left after the pinned
		// facts, keeping a quarter of the budget for the newest sections.
		room := budget - used - budget/4
		if room > 20 && emit("\n## Condensed history\n") {
			text, cut := newestLines(c, room-5)
			if cut {
				d.Truncated = true
			}
			if text != "" {
				emit(text + "\n")
			}
			d.Condensed = text
		}
	}
	secs := current(mf.Recent())
	if len(secs) > 0 && emit("\n## Newest sections\n") {
		for i := len(secs) - 1; i >= 0; i-- {
			s := secs[i]
			first := chunk.FirstLine(s.Note())
			line := recentLine(s.Heading, first)
			// A newer section that states this one's subject again
			// with something changed: say so, so that the older value
			// is not read as current.
			restatedIn := ""
			for _, t := range secs[i+1:] {
				if dedup.Outdates(s.Note(), t.Note()) {
					restatedIn = t.Heading
				}
			}
			if restatedIn != "" {
				line += " (restated in " + restatedIn + ")"
			}
			if !emit(line + "\n") {
				break
			}
			d.Recent = append(d.Recent, RecentItem{Heading: s.Heading, FirstLine: first, Date: s.Date, Line: s.StartLine, RestatedIn: restatedIn})
		}
	}
	d.Tokens, d.Text = used, b.String()
	return d, ctx.Err()
}

// wakeUpHive is the hive-wide digest: a title line, then one line per agent
// while they fit the budget. A budget too small for the title gives an
// empty, truncated digest: agent lines without their title would not say
// what they are.
func (p *Palace) wakeUpHive(ctx context.Context, budget int) (Digest, error) {
	ids, err := p.home.Agents()
	if err != nil {
		return Digest{}, fmt.Errorf("wake-up: %w", err)
	}
	d := Digest{Budget: budget}
	var b strings.Builder
	head := fmt.Sprintf("# Wake-up — hive (%s)\n", english.Plural(len(ids), "agent", "agents"))
	used := chunk.EstimateTokens(head)
	if used > budget {
		d.Truncated = true
		return d, nil
	}
	b.WriteString(head)
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return d, err
		}
		path, _ := p.home.MemoryPath(id)
		data, err := p.readFile(path)
		if err != nil {
			continue
		}
		al := AgentLine{Agent: id, Bytes: int64(len(data))}
		if mf, err := memfile.Parse(data); err == nil {
			secs := mf.Recent()
			al.Sections, al.Pinned = len(secs), len(mf.Pinned())
			if cur := current(secs); len(cur) > 0 {
				al.Newest = cur[len(cur)-1].Heading
			}
		}
		line := fmt.Sprintf("- %s: %s, %d pinned, %s", id, english.Plural(al.Sections, "section", "sections"), al.Pinned, humanize.IBytes(uint64(al.Bytes)))
		if al.Newest != "" {
			line += "; newest: " + al.Newest
		}
		line += "\n"
		t := chunk.EstimateTokens(line)
		if used+t > budget {
			d.Truncated = true
			break
		}
		b.WriteString(line)
		used += t
		d.Agents = append(d.Agents, al)
	}
	d.Tokens, d.Text = used, b.String()
	return d, nil
}

// current returns the sections no other one replaces: those without a
// "> superseded by:" marker, which search leaves out too, so that a new
// session is not told an outdated fact as if it held.
func current(secs []memfile.Section) []memfile.Section {
	var out []memfile.Section
	for _, s := range secs {
		if s.SupersededBy == "" {
			out = append(out, s)
		}
	}
	return out
}

// memoryForWing finds the memory file a wing's digest is built from: the
// agent's own file when the wing is an agent id, else the mined memory.md
// recorded under that wing, else (a wing of other mined files, which search
// accepts too) the wing's most recently mined file. A wing none of them
// has is ErrUnknownWing, or, when it is no agent id either, a bad query
// naming the invalid id.
func (p *Palace) memoryForWing(ctx context.Context, wing string) (string, error) {
	if home.ValidateAgentID(wing) == nil {
		path, _ := p.home.MemoryPath(wing)
		if _, err := os.Stat(path); err == nil {
			return path, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("wake-up %s: %w", wing, err)
		}
	}
	files, err := p.store.Files(ctx, "")
	if err != nil {
		return "", fmt.Errorf("wake-up %s: %w", wing, err)
	}
	var newest *store.File
	for i, f := range files {
		if f.Wing != wing {
			continue
		}
		if strings.HasSuffix(f.Source, "memory.md") {
			return p.home.Abs(f.Source), nil
		}
		if newest == nil || f.MinedAt.After(newest.MinedAt) {
			newest = &files[i]
		}
	}
	if newest != nil {
		return p.home.Abs(newest.Source), nil
	}
	if err := home.ValidateAgentID(wing); err != nil {
		// No mined file has it and no agent can: the id is what is wrong
		// (bad input, as remember and pin say), not an unknown wing.
		return "", fmt.Errorf("wake-up: %w", badQuery{fmt.Errorf("%w; no mined file has it as its wing either", err)})
	}
	return "", fmt.Errorf("wake-up: %w %q: no agent or mined file has it", ErrUnknownWing, wing)
}

// newestLines fits condensed history into about n estimated tokens without
// losing its layout: lines stay lines (never joined), and what does not fit
// goes oldest first. The history is read as blocks — a period line and the
// lines indented under it — newest last; the pointer to the archive, if
// the history ends with one, is kept first. Whole blocks are kept from the
// newest back; the first that does not fit keeps its period line and as
// many of its newest lines as fit, and older blocks are dropped (the
// digest says it is truncated). Only a newest period line longer than the
// whole room is cut, at a word.
func newestLines(c string, n int) (string, bool) {
	var lines []string
	for _, l := range strings.Split(strings.ReplaceAll(c, "\r\n", "\n"), "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, strings.TrimRight(l, " \t\r"))
		}
	}
	if len(lines) == 0 {
		return "", false
	}
	cost := func(l string) int { return chunk.EstimateTokens(l + "\n") }
	var tail []string
	if last := lines[len(lines)-1]; strings.HasPrefix(last, memfile.ArchivePointerPrefix) {
		tail = []string{last}
		lines = lines[:len(lines)-1]
		n -= cost(last)
	}
	// Blocks: a line that is not indented starts one.
	var blocks [][]string
	for _, l := range lines {
		if len(blocks) == 0 || !(strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")) {
			blocks = append(blocks, nil)
		}
		blocks[len(blocks)-1] = append(blocks[len(blocks)-1], l)
	}
	used := 0
	var kept [][]string // newest first
	cut := false
	for i := len(blocks) - 1; i >= 0; i-- {
		b := blocks[i]
		w := 0
		for _, l := range b {
			w += cost(l)
		}
		if used+w <= n {
			kept = append(kept, b)
			used += w
			continue
		}
		cut = true
		// Partly: the period line, then its newest lines that fit.
		head := b[0]
		if used+cost(head) > n {
			if len(kept) == 0 && n-used > 4 {
				kept = append(kept, []string{chunk.CutToTokens(head, n-used-2)})
			}
			break
		}
		used += cost(head)
		var body []string
		for j := len(b) - 1; j >= 1; j-- {
			if used+cost(b[j]) > n {
				break
			}
			used += cost(b[j])
			body = append([]string{b[j]}, body...)
		}
		kept = append(kept, append([]string{head}, body...))
		break
	}
	var out []string
	for i := len(kept) - 1; i >= 0; i-- {
		out = append(out, kept[i]...)
	}
	out = append(out, tail...)
	return strings.Join(out, "\n"), cut
}
