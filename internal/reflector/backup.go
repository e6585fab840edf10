package reflector

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"time"

	"github.com/hivemem/hivemem/internal/atomicio"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/memfile"
)

// stampLayout names backup directories: hive/backups/<stamp>/<agent>/memory.md,
// e.g. 20261129T135100Z, or 20261129T135100Z-2 when that second is taken.
const stampLayout = "20060102T150405Z"

// Latest names the newest backup of an agent in Restore.
const Latest = "latest"

var backupNameRE = regexp.MustCompile(`^(\d{8}T\d{6}Z)(?:-([1-9]\d{0,5}))?$`)

// Backup is one saved copy of an agent's memory file.
type Backup struct {
	Agent string    `json:"agent"`
	Name  string    `json:"name"` // the stamp directory, what Restore takes
	Path  string    `json:"path"`
	Size  int64     `json:"size"`
	Time  time.Time `json:"time"` // from the name (UTC, second precision)
	seq   int       // the "-N" suffix, 1 without one
}

// parseBackupName checks a backup name and returns its time and suffix.
func parseBackupName(name string) (time.Time, int, bool) {
	m := backupNameRE.FindStringSubmatch(name)
	if m == nil {
		return time.Time{}, 0, false
	}
	t, err := time.Parse(stampLayout, m[1])
	if err != nil {
		return time.Time{}, 0, false
	}
	seq := 1
	if m[2] != "" {
		seq, _ = strconv.Atoi(m[2])
	}
	return t, seq, true
}

// Backups lists the backups of agent, newest first; agent "" lists every
// agent's. Directories that are not backups are ignored.
func Backups(h home.Home, agent string) ([]Backup, error) {
	if agent != "" {
		if err := home.ValidateAgentID(agent); err != nil {
			return nil, err
		}
	}
	ents, err := home.ReadDir(h.BackupsDir())
	if err != nil {
		return nil, fmt.Errorf("list backups: %w", err)
	}
	var out []Backup
	for _, e := range ents {
		t, seq, ok := parseBackupName(e.Name())
		if !e.IsDir() || !ok {
			continue
		}
		agents := []string{agent}
		if agent == "" {
			sub, err := os.ReadDir(filepath.Join(h.BackupsDir(), e.Name()))
			if err != nil {
				continue // pruned meanwhile
			}
			agents = agents[:0]
			for _, s := range sub {
				if s.IsDir() && home.ValidateAgentID(s.Name()) == nil {
					agents = append(agents, s.Name())
				}
			}
		}
		for _, a := range agents {
			p := filepath.Join(h.BackupsDir(), e.Name(), a, "memory.md")
			st, err := os.Stat(p)
			if err != nil || !st.Mode().IsRegular() {
				continue
			}
			out = append(out, Backup{Agent: a, Name: e.Name(), Path: p, Size: st.Size(), Time: t, seq: seq})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if !a.Time.Equal(b.Time) {
			return a.Time.After(b.Time)
		}
		if a.seq != b.seq {
			return a.seq > b.seq
		}
		return a.Agent < b.Agent
	})
	return out, nil
}

// ErrBadBackupName is wrapped by FindBackup's (and Restore's) error for a
// name that is no backup name; ErrNoBackup for a backup that does not
// exist.
var (
	ErrBadBackupName = errors.New("bad backup name")
	ErrNoBackup      = errors.New("no such backup")
)

// backupError is an error of one of the kinds above, its message as is.
type backupError struct {
	kind error
	msg  string
}

func (e backupError) Error() string        { return e.msg }
func (e backupError) Is(target error) bool { return target == e.kind }

// CheckBackupName refuses (ErrBadBackupName) a name of agent's backups
// that does not have the form of a backup name and is not Latest, before
// any lookup.
func CheckBackupName(agent, name string) error {
	if name != Latest && !backupNameRE.MatchString(name) {
		return backupError{ErrBadBackupName, fmt.Sprintf("backup name %q is not valid: want a stamp like 20261129T135100Z (see `hivemem backups %s`) or %q", name, agent, Latest)}
	}
	return nil
}

// FindBackup resolves a backup name (or Latest) for agent.
func FindBackup(h home.Home, agent, name string) (Backup, error) {
	if err := CheckBackupName(agent, name); err != nil {
		return Backup{}, err
	}
	all, err := Backups(h, agent)
	if err != nil {
		return Backup{}, err
	}
	if len(all) == 0 {
		return Backup{}, backupError{ErrNoBackup, fmt.Sprintf("agent %s has no backups", agent)}
	}
	if name == Latest {
		return all[0], nil
	}
	for _, b := range all {
		if b.Name == name {
			return b, nil
		}
	}
	return Backup{}, backupError{ErrNoBackup, fmt.Sprintf("agent %s has no backup %s (see `hivemem backups %s`)", agent, name, agent)}
}

// writeBackup saves data as a new backup of agent, named after now. Names
// only ever grow for an agent, so the new backup is always the newest and
// pruning can never remove it: when now's second is taken (or the clock is
// behind the newest backup) it takes the newest backup's stamp with the
// next suffix ("-2", "-3", ...). The copy is written atomically, so a crash
// never leaves half a backup.
func writeBackup(h home.Home, agent string, data []byte, now time.Time) (Backup, error) {
	// Never write a copy of memory through a link out of the home.
	if _, err := h.Contain(h.BackupsDir()); err != nil {
		return Backup{}, fmt.Errorf("write backup: %w", err)
	}
	existing, err := Backups(h, agent)
	if err != nil {
		return Backup{}, err
	}
	base, seq := now.UTC().Format(stampLayout), 1
	if len(existing) > 0 {
		if newest := existing[0]; !now.UTC().Truncate(time.Second).After(newest.Time) {
			base, seq = newest.Time.Format(stampLayout), newest.seq+1
		}
	}
	for tries := 0; tries < 1000; tries++ {
		name := base
		if seq > 1 {
			name = fmt.Sprintf("%s-%d", base, seq)
		}
		stampDir := filepath.Join(h.BackupsDir(), name)
		if err := h.MkdirAll(stampDir); err != nil {
			return Backup{}, fmt.Errorf("create backup directory: %w", err)
		}
		dir := filepath.Join(stampDir, agent)
		err := os.Mkdir(dir, 0o755)
		switch {
		case errors.Is(err, fs.ErrExist):
			seq++ // taken by a concurrent writer
			continue
		case errors.Is(err, fs.ErrNotExist):
			continue // the stamp directory was pruned meanwhile: retry
		case err != nil:
			return Backup{}, fmt.Errorf("create backup directory: %w", err)
		}
		p := filepath.Join(dir, "memory.md")
		if err := atomicio.WriteFile(p, data, 0o644); err != nil {
			_ = removeBackupDir(h, name, agent)
			return Backup{}, fmt.Errorf("write backup: %w", err)
		}
		t, _, _ := parseBackupName(name)
		return Backup{Agent: agent, Name: name, Path: p, Size: int64(len(data)), Time: t, seq: seq}, nil
	}
	return Backup{}, fmt.Errorf("write backup: no free backup name for %s at %s", agent, base)
}

// removeBackupDir deletes one agent's backup and its stamp directory when
// that becomes empty.
func removeBackupDir(h home.Home, name, agent string) error {
	stampDir := filepath.Join(h.BackupsDir(), name)
	if err := os.RemoveAll(filepath.Join(stampDir, agent)); err != nil {
		return fmt.Errorf("remove backup %s/%s: %w", name, agent, err)
	}
	_ = os.Remove(stampDir) // fails while other agents' backups are in it: fine
	return nil
}

// pruneBackups keeps the newest keep backups of agent and deletes the rest.
func pruneBackups(h home.Home, agent string, keep int) (int, error) {
	keep = max(keep, 1)
	all, err := Backups(h, agent)
	if err != nil {
		return 0, err
	}
	var errs []error
	n := 0
	for _, b := range all[min(keep, len(all)):] {
		if err := removeBackupDir(h, b.Name, agent); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// RestoreResult says what Restore did.
type RestoreResult struct {
	Agent string `json:"agent"`
	// Backup is the backup that was put back.
	Backup string `json:"backup"`
	// PreRestoreBackup is the backup of the file Restore replaced ("" when
	// there was no file), so a restore can itself be undone.
	PreRestoreBackup string `json:"pre_restore_backup,omitempty"`
	OldBytes         int64  `json:"old_bytes"`
	NewBytes         int64  `json:"new_bytes"`
	Unchanged        bool   `json:"unchanged,omitempty"`
	// Held says automatic condensation now leaves the file alone until it
	// changes (see RestoredHold).
	Held bool `json:"held"`
	// Archived is how many sections the restore put in the archive: those
	// of the replaced file the backup does not hold, and one of its other
	// lines the backup lacks (Archive is the file, relative to the home).
	Archived  int    `json:"archived,omitempty"`
	Archive   string `json:"archive,omitempty"`
	MineError string `json:"mine_error,omitempty"`
}

// Restore puts a backup of agent's memory file back (name is a backup name
// from Backups, or Latest). The current file is backed up first, the swap
// is locked and atomic, a "restore" event is logged and the file is mined
// again. Lines written since the backup are not lost: what the restore
// takes out (sections and lines the backup does not hold) is appended to
// the archive first, where search finds it and no rotation of backups
// reaches it, and the whole replaced file is in the pre-restore backup.
// The restored file is then held: automatic passes do not condense it
// again until it changes or a condensation is forced.
func (r *Reflector) Restore(ctx context.Context, agent, name string) (RestoreResult, error) {
	res := RestoreResult{Agent: agent}
	if err := home.ValidateAgentID(agent); err != nil {
		return res, fmt.Errorf("restore: %w", err)
	}
	b, err := FindBackup(r.home, agent, name)
	if err != nil {
		return res, fmt.Errorf("restore: %w", err)
	}
	res.Backup = b.Name
	data, err := os.ReadFile(b.Path)
	if err != nil {
		return res, fmt.Errorf("restore: read backup: %w", err)
	}
	if _, err := memfile.Parse(data); err != nil {
		return res, fmt.Errorf("restore: backup %s is not a usable memory file: %w", b.Name, err)
	}
	path, err := r.home.MemoryPath(agent)
	if err != nil {
		return res, err
	}
	if _, err := r.home.Contain(path); err != nil {
		return res, fmt.Errorf("restore: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return res, fmt.Errorf("restore: %w", err)
	}
	release, err := r.acquire(ctx, agent)
	if err != nil {
		return res, fmt.Errorf("restore: %w", err)
	}
	defer release()
	lctx, cancel := context.WithTimeout(ctx, r.lockTimeout)
	unlock, err := atomicio.Lock(lctx, path)
	cancel()
	if err != nil {
		return res, fmt.Errorf("restore: %w", err)
	}
	var hold *RestoredHold
	var archives []string
	err = func() (err error) {
		defer func() {
			if uerr := unlock(); uerr != nil && err == nil {
				err = fmt.Errorf("unlock: %w", uerr)
			}
		}()
		if _, err := atomicio.Recover(path); err != nil {
			return err
		}
		fh, cur, err := atomicio.ReadForSwap(path)
		switch {
		case err != nil:
			return fmt.Errorf("read %s: %w", path, err)
		case fh != nil:
			defer fh.Close()
			res.OldBytes = int64(len(cur))
			if string(cur) == string(data) {
				res.Unchanged = true
				res.NewBytes = res.OldBytes
				hold = &RestoredHold{Backup: b.Name, At: r.now(), Size: int64(len(cur)), SHA256: fileHash(cur)}
				return nil
			}
			// What the restore takes out goes to the archive first (as
			// condensation evicts), where search finds it and no backup
			// rotation reaches it.
			if taken := takenOut(cur, data, b.Name, r.now()); len(taken) > 0 {
				written, n, err := r.appendArchive(ctx, agent, taken, r.settings().Palace.MaxFileBytes)
				archives = written
				if err != nil {
					return fmt.Errorf("archive what the restore takes out: %w", err)
				}
				res.Archived = n
				if len(written) > 0 {
					res.Archive = r.home.Rel(written[len(written)-1])
				}
			}
			pre, err := writeBackup(r.home, agent, cur, r.now())
			if err != nil {
				return err
			}
			res.PreRestoreBackup = pre.Name
		}
		// Swap carries a line an agent appends during the restore into the
		// restored file, as after a condensation.
		sw, err := atomicio.Swap(path, fh, int64(len(cur)), data, 0o644, r.salvageGrace)
		if !sw.Swapped {
			if res.PreRestoreBackup != "" {
				_ = removeBackupDir(r.home, res.PreRestoreBackup, agent)
			}
			return err
		}
		if err != nil {
			r.log.Warn("reflector: restored with an error", "agent", agent, "err", err)
		}
		res.NewBytes = int64(len(data)) + sw.Salvaged
		// Hold what the file holds now, a salvaged late line included.
		now, rerr := atomicio.ReadRegular(path)
		if rerr != nil {
			now = data
		}
		hold = &RestoredHold{Backup: b.Name, At: r.now(), Size: int64(len(now)), SHA256: fileHash(now)}
		return nil
	}()
	if err != nil {
		return res, fmt.Errorf("restore %s from %s: %w", agent, b.Name, err)
	}
	if hold != nil {
		r.setRestored(ctx, agent, hold)
		res.Held = true
	}
	if res.Unchanged {
		return res, nil
	}
	if _, err := pruneBackups(r.home, agent, r.settings().Reflector.Retention); err != nil {
		r.log.Warn("reflector: prune backups", "agent", agent, "err", err)
	}
	r.event("restore", agent, "", map[string]any{
		"backup": b.Name, "preRestoreBackup": res.PreRestoreBackup,
		"oldBytes": res.OldBytes, "newBytes": res.NewBytes, "held": res.Held, "archived": res.Archived,
	})
	var mineErrs []error
	for _, a := range archives {
		mineErrs = append(mineErrs, r.mine(ctx, a))
	}
	mineErrs = append(mineErrs, r.mine(ctx, path))
	if err := errors.Join(mineErrs...); err != nil {
		res.MineError = err.Error()
	}
	return res, nil
}
