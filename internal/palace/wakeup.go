package palace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/dustin/go-humanize"
	"github.com/dustin/go-humanize/english"

	"github.com/hivemem/hivemem/internal/chunk"
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
	Wing      string       `json:"wing,omitempty"`
	Budget    int          `json:"budget"`
	Tokens    int          `json:"tokens"`
	Pinned    []string     `json:"pinned,omitempty"`
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
// priority. With no wing it gives one line per agent. The budget is in
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
		for _, f := range facts {
			if !emit("- " + f + "\n") {
				break
			}
			d.Pinned = append(d.Pinned, f)
		}
	}
	if c := mf.Condensed(); c != "" {
		// The condensed history may take what is left after the pinned
		// facts, keeping a quarter of the budget for the newest sections.
		room := budget - used - budget/4
		if room > 20 && emit("\n## Condensed history\n") {
			text := cutToTokens(c, room-5)
			if text != c {
				d.Truncated = true
			}
			emit(text + "\n")
			d.Condensed = text
		}
	}
	secs := mf.Recent()
	if len(secs) > 0 && emit("\n## Newest sections\n") {
		for i := len(secs) - 1; i >= 0; i-- {
			s := secs[i]
			first := firstLine(s.Body())
			line := "- " + s.Heading
			if first != "" {
				line += ": " + first
			}
			if !emit(line + "\n") {
				break
			}
			d.Recent = append(d.Recent, RecentItem{Heading: s.Heading, FirstLine: first, Date: s.Date, Line: s.StartLine})
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
			if len(secs) > 0 {
				al.Newest = secs[len(secs)-1].Heading
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

// memoryForWing finds the memory file a wing's digest is built from: the
// agent's own file when the wing is an agent id, else the mined memory.md
// recorded under that wing, else (a wing of other mined files, which search
// accepts too) the wing's most recently mined file.
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
	return "", fmt.Errorf("wake-up: %w %q: no agent or mined file has it", ErrUnknownWing, wing)
}

func firstLine(body string) string {
	for _, l := range strings.Split(body, "\n") {
		l = strings.TrimSpace(l)
		if l != "" {
			if len(l) > 160 {
				l = cutToTokens(l, 40) + "…"
			}
			return l
		}
	}
	return ""
}

// cutToTokens keeps whole words of s up to about n estimated tokens.
func cutToTokens(s string, n int) string {
	if chunk.EstimateTokens(s) <= n {
		return s
	}
	words := strings.Fields(s)
	lo, hi := 0, len(words)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if chunk.EstimateTokens(strings.Join(words[:mid], " ")) <= n {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return strings.Join(words[:lo], " ") + " …"
}
