//go:build !linux

package atomicio

// exchange cannot swap two files in one step on this system; Swap renames
// after checking, which leaves a window of a few microseconds in which a
// save by another program can be overwritten.
func exchange(a, b string) (bool, error) { return false, nil }
