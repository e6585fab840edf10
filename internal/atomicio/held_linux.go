package atomicio

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// fileID is a file's identity: device and inode.
type fileID struct{ dev, ino uint64 }

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
	id := fileID{uint64(want.Dev), want.Ino}
	held := false
	err = eachOpenElsewhere(func(got fileID) bool {
		held = got == id
		return !held
	})
	return held, err
}

// openElsewhere reports which of paths a process other than this one has
// open, with one look through /proc/*/fd for them all.
func openElsewhere(paths []string) (map[string]bool, error) {
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
	err := eachOpenElsewhere(func(got fileID) bool {
		for _, p := range want[got] {
			out[p] = true
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// eachOpenElsewhere calls fn with the identity of every file a process
// other than this one has open (one look through /proc/*/fd; processes
// that are gone or not ours to read are skipped), until fn returns false.
func eachOpenElsewhere(fn func(fileID) bool) error {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return err
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
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && !fn(fileID{uint64(st.Dev), st.Ino}) {
				return nil
			}
		}
	}
	return nil
}
