//go:build !unix

package kernel

// cpuSeconds cannot read the CPU time here.
func cpuSeconds() float64 { return -1 }
