package purge

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hivemem/hivemem/internal/atomicio"
)

// StateFile is where a home keeps its purges, under palace/.
const StateFile = "purged.json"

// Entry is one purged text as the state keeps it: never the text, only
// what finds it again.
type Entry struct {
	Len  int    `json:"len"`
	Roll uint64 `json:"roll"` // Rabin-Karp hash under State.Base
	Sum  string `json:"sum"`  // hex SHA-256 of State.Salt and the text
	// Section marks a purged section's heading (see Span.Section).
	Section bool `json:"section,omitempty"`
}

// Record is one purge: its texts, and whether it is done. Drawers are the
// content hashes of index drawers that held a text, kept so that a purge
// killed after the index dropped them still clears their cached vectors.
type Record struct {
	ID      string    `json:"id"`
	Started time.Time `json:"started"`
	Entries []Entry   `json:"entries"`
	Drawers []string  `json:"drawers,omitempty"`
	Done    bool      `json:"done"`
}

// State is a home's purges: the block list (every record) and the purges
// still to finish (records not done).
type State struct {
	Version int      `json:"version"`
	Base    uint64   `json:"base"`
	Salt    string   `json:"salt"`
	Purges  []Record `json:"purges"`
}

// Path is the state file of a palace directory.
func Path(palaceDir string) string { return filepath.Join(palaceDir, StateFile) }

// Load reads the state; a missing file is an empty state.
func Load(palaceDir string) (State, error) {
	data, err := os.ReadFile(Path(palaceDir))
	if errors.Is(err, fs.ErrNotExist) {
		return State{}, nil
	}
	if err != nil {
		return State{}, fmt.Errorf("purge state: %w", err)
	}
	var s State
	if err := json.Unmarshal(data, &s); err != nil {
		return State{}, fmt.Errorf("purge state %s is malformed (%w): it holds no text, only hashes; fix or remove it", Path(palaceDir), err)
	}
	return s, nil
}

// Pending reports whether a purge is still to be finished: a cheap check
// for every command that opens the home.
func Pending(palaceDir string) bool {
	s, err := Load(palaceDir)
	if err != nil {
		return false
	}
	for _, r := range s.Purges {
		if !r.Done {
			return true
		}
	}
	return false
}

// init gives a new state its random base and salt.
func (s *State) init() error {
	if s.Salt != "" && s.Base > 1 {
		return nil
	}
	var b [8 + 16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Errorf("purge state: %w", err)
	}
	s.Version = 1
	s.Base = binary.LittleEndian.Uint64(b[:8])%(prime-257) + 257
	s.Salt = hex.EncodeToString(b[8:])
	return nil
}

func (s State) salt() []byte {
	b, _ := hex.DecodeString(s.Salt)
	return b
}

// entry hashes one text under the state's base and salt.
func (s State) entry(text string, section bool) Entry {
	return Entry{Len: len(text), Roll: roll(s.Base, []byte(text)), Sum: sum(s.salt(), []byte(text)), Section: section}
}

// Matcher finds the texts of the records keep accepts (all when nil).
func (s State) Matcher(keep func(Record) bool) *Matcher {
	var es []Entry
	for _, r := range s.Purges {
		if keep == nil || keep(r) {
			es = append(es, r.Entries...)
		}
	}
	return newMatcher(s.Base, s.salt(), es)
}

// PendingMatcher finds the texts of the purges not done.
func (s State) PendingMatcher() *Matcher {
	return s.Matcher(func(r Record) bool { return !r.Done })
}

// Text is one text to purge; Section marks a purged section's heading.
type Text struct {
	Text    string
	Section bool
}

// CheckText refuses a text too short to purge safely.
func CheckText(t string) error {
	if strings.TrimSpace(t) == "" {
		return errors.New("give the text to purge")
	}
	if len(t) < MinLen {
		return fmt.Errorf("%d bytes is too short to purge: a purge takes the text out of every file of the home, so it must be at least %d bytes (give the whole secret, or forget the section with --purge)", len(t), MinLen)
	}
	return nil
}

// Store is a home's purge state on disk: every change is made under its
// lock and written atomically.
type Store struct{ dir string }

// Open is the purge state of a palace directory.
func Open(palaceDir string) Store { return Store{dir: palaceDir} }

// Lock takes the purge lock: one purge at a time in the home.
func (st Store) Lock(ctx context.Context) (func() error, error) {
	if err := os.MkdirAll(st.dir, 0o755); err != nil {
		return nil, fmt.Errorf("purge: %w", err)
	}
	return atomicio.Lock(ctx, Path(st.dir))
}

// Update changes the state (the caller holds Lock).
func (st Store) Update(fn func(*State) error) (State, error) {
	s, err := Load(st.dir)
	if err != nil {
		return s, err
	}
	if err := s.init(); err != nil {
		return s, err
	}
	if err := fn(&s); err != nil {
		return s, err
	}
	data, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return s, fmt.Errorf("purge state: %w", err)
	}
	if err := atomicio.WriteFile(Path(st.dir), append(data, '\n'), 0o600); err != nil {
		return s, fmt.Errorf("purge state: %w", err)
	}
	return s, nil
}

// Begin records a purge of texts (the caller holds Lock) and returns its
// id. Texts that are empty are left out.
func (st Store) Begin(texts []Text, now time.Time) (string, State, error) {
	var id string
	s, err := st.Update(func(s *State) error {
		var b [6]byte
		_, _ = rand.Read(b[:])
		id = now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
		r := Record{ID: id, Started: now.UTC()}
		seen := map[string]bool{}
		for _, t := range texts {
			if t.Text == "" {
				continue
			}
			e := s.entry(t.Text, t.Section)
			if k := fmt.Sprint(e.Sum, e.Section); !seen[k] {
				seen[k] = true
				r.Entries = append(r.Entries, e)
			}
		}
		s.Purges = append(s.Purges, r)
		return nil
	})
	return id, s, err
}

// AddDrawers keeps the content hashes of index drawers that held a text
// of the pending purges.
func (st Store) AddDrawers(hashes []string) error {
	if len(hashes) == 0 {
		return nil
	}
	_, err := st.Update(func(s *State) error {
		for i := range s.Purges {
			if !s.Purges[i].Done {
				s.Purges[i].Drawers = append(s.Purges[i].Drawers, hashes...)
			}
		}
		return nil
	})
	return err
}

// Finish marks every pending purge done; their texts stay in the block list.
func (st Store) Finish() error {
	_, err := st.Update(func(s *State) error {
		for i := range s.Purges {
			if !s.Purges[i].Done {
				s.Purges[i].Done, s.Purges[i].Drawers = true, nil
			}
		}
		return nil
	})
	return err
}

// Ephemeral is a matcher for texts not recorded anywhere (a dry run).
func Ephemeral(texts []Text) (*Matcher, error) {
	var s State
	if err := s.init(); err != nil {
		return nil, err
	}
	var es []Entry
	for _, t := range texts {
		if t.Text != "" {
			es = append(es, s.entry(t.Text, t.Section))
		}
	}
	return newMatcher(s.Base, s.salt(), es), nil
}

// Blocklist is every text ever purged in a home: a write or an import
// that brings one back is redacted on the way in.
type Blocklist struct{ m *Matcher }

// LoadBlocklist reads a home's block list; an unreadable state is an
// error (a write should not go on as if nothing was ever purged).
func LoadBlocklist(palaceDir string) (Blocklist, error) {
	s, err := Load(palaceDir)
	if err != nil {
		return Blocklist{}, err
	}
	return Blocklist{m: s.Matcher(nil)}, nil
}

// Redact replaces every purged text in text with Marker and says how
// many it replaced.
func (b Blocklist) Redact(text string) (string, int) {
	spans := b.m.Find([]byte(text))
	if len(spans) == 0 {
		return text, 0
	}
	var sb strings.Builder
	at := 0
	for _, s := range spans {
		sb.WriteString(text[at:s.Start])
		sb.WriteString(Marker)
		at = s.End
	}
	sb.WriteString(text[at:])
	return sb.String(), len(spans)
}

// NewBlocklist is a block list of what m finds.
func NewBlocklist(m *Matcher) Blocklist { return Blocklist{m: m} }

// Empty reports whether nothing was ever purged.
func (b Blocklist) Empty() bool { return b.m.Empty() }
