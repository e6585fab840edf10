package atomicio

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// heldOpenElsewhere reports whether a process other than this one has f's
// file open, by looking through /proc/*/fd (processes of other users that
// cannot be read are skipped: agents run as the user hivemem runs as).
func heldOpenElsewhere(f *os.File) (bool, error) {
	st, err := f.Stat()
	if err != nil {
		return false, err
	}
	want, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return false, errors.New("no inode for the replaced file")
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return false, err
	}
	self := os.Getpid()
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == self {
			continue
		}
		dir := filepath.Join("/proc", p.Name(), "fd")
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue // gone, or not ours to read
		}
		for _, fd := range fds {
			fi, err := os.Stat(filepath.Join(dir, fd.Name()))
			if err != nil {
				continue
			}
			if got, ok := fi.Sys().(*syscall.Stat_t); ok && got.Dev == want.Dev && got.Ino == want.Ino {
				return true, nil
			}
		}
	}
	return false, nil
}

// openElsewhere reports which of paths a process other than this one has
// open, with one look through /proc/*/fd for them all.
func openElsewhere(paths []string) (map[string]bool, error) {
	type fileID struct{ dev, ino uint64 }
	want := make(map[fileID][]string, len(paths))
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			id := fileID{uint64(st.Dev), st.Ino}
			want[id] = append(want[id], p)
		}
	}
	out := map[string]bool{}
	if len(want) == 0 {
		return out, nil
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	for _, pr := range procs {
		pid, err := strconv.Atoi(pr.Name())
		if err != nil || pid == self {
			continue
		}
		dir := filepath.Join("/proc", pr.Name(), "fd")
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue // gone, or not ours to read
		}
		for _, fd := range fds {
			fi, err := os.Stat(filepath.Join(dir, fd.Name()))
			if err != nil {
				continue
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				for _, p := range want[fileID{uint64(st.Dev), st.Ino}] {
					out[p] = true
				}
			}
		}
	}
	return out, nil
}
