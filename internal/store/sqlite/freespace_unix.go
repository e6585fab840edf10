//go:build linux || darwin || freebsd

package sqlite

import "syscall"

// freeBytes is the space available to this user on the file system of
// dir.
func freeBytes(dir string) (uint64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return uint64(st.Bavail) * uint64(st.Bsize), true
}
