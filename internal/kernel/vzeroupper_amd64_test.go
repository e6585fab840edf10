//go:build amd64

package kernel

import (
	"bufio"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Test helpers in kernel_amd64.s.
func cpuidex(leaf, sub uint32) (eax, ebx, ecx, edx uint32)
func xinuse() uint64
func dirtyUpper()

// kernelCalls runs each assembly routine once, on inputs that reach every
// branch (main loop, 8-wide step, masked tail).
var kernelCalls = []struct {
	name string
	call func()
}{
	{"dotAVX2", func() {
		a := make([]float32, 45)
		dotAVX2(&a[0], &a[0], len(a))
	}},
	{"dotBatch4AVX2", func() {
		v := make([]float32, 8*27)
		out := make([]float32, 8)
		dotBatch4AVX2(&out[0], &v[0], &v[0], 27, 8)
	}},
	{"gemm12x32AVX512", func() {
		if !hasAVX512 {
			return
		}
		a, b, c := make([]float32, 12*3), make([]float32, 32*3), make([]float32, 12*32)
		gemm12x32AVX512(&c[0], 32, &a[0], 3, &b[0], &b[0], 3, 12)
	}},
	{"gemm12x32F16AVX512", func() {
		if !hasAVX512 {
			return
		}
		a, b, c := make([]float32, 12*3), make([]uint16, 32*3), make([]float32, 12*32)
		gemm12x32F16AVX512(&c[0], 32, &a[0], 3, &b[0], &c[0], 3, 12)
	}},
	{"gemm6x16F16AVX2", func() {
		a, b, c := make([]float32, 6*3), make([]uint16, 16*3), make([]float32, 6*16)
		gemm6x16F16AVX2(&c[0], 16, &a[0], 3, &b[0], &c[0], 3, 6)
	}},
	{"gemm6x16AVX2", func() {
		a, b, c := make([]float32, 6*3), make([]float32, 16*3), make([]float32, 6*16)
		gemm6x16AVX2(&c[0], 16, &a[0], 3, &b[0], &b[0], 3, 6)
	}},
	{"gemm3x4AVX2", func() {
		v := make([]float32, 8*29)
		c := make([]float32, 3*8)
		gemm3x4AVX2(&c[0], 8, &v[0], &v[0], 29, 2)
	}},
}

// TestAsmEndsWithVzeroupper reads every *_amd64.s file and checks that in
// every routine that names a YMM or ZMM register, each RET directly follows
// VZEROUPPER.
func TestAsmEndsWithVzeroupper(t *testing.T) {
	files, err := filepath.Glob("*_amd64.s")
	if err != nil || len(files) == 0 {
		t.Fatalf("no assembly files found: %v", err)
	}
	checked := false
	for _, name := range files {
		checked = checkVzeroupper(t, name) || checked
	}
	if !checked {
		t.Fatal("found no AVX routine to check: has the file format changed?")
	}
}

// checkVzeroupper checks one file and reports whether it has AVX routines.
func checkVzeroupper(t *testing.T, name string) bool {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	wide := regexp.MustCompile(`\b[YZ]\d+\b`)
	var fn string
	var usesWide, checked bool
	var prev string
	var rets []string // "fn: previous instruction" for each RET
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" || strings.HasSuffix(line, ":") || strings.HasPrefix(line, "#") {
			continue
		}
		op := strings.Fields(line)[0]
		switch {
		case op == "TEXT":
			fn, usesWide = line, false
		case op == "RET":
			if usesWide && !strings.Contains(fn, "·dirtyUpper(") {
				checked = true
				if prev != "VZEROUPPER" {
					rets = append(rets, fn+": RET after "+prev)
				}
			}
		case wide.MatchString(line):
			usesWide = true
		}
		prev = op
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, r := range rets {
		t.Errorf("%s: missing VZEROUPPER before RET in %s", name, r)
	}
	return checked
}

// TestUpperStateClean checks at run time that each kernel returns with the
// YMM upper halves clean. Where the CPU reports XINUSE (XGETBV with ECX=1)
// the check is exact; elsewhere it falls back to timing math.Exp, which the
// dirty state slows by an order of magnitude or more.
func TestUpperStateClean(t *testing.T) {
	if !hasAsm {
		t.Skip("no AVX2+FMA assembly on this machine")
	}
	// The upper state belongs to the OS thread, so stay on one.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	if top, _, _, _ := cpuidex(0, 0); top >= 0xd {
		if eax, _, _, _ := cpuidex(0xd, 1); eax&4 != 0 {
			dirtyUpper()
			if xinuse()&4 == 0 {
				t.Fatal("XINUSE does not report the YMM state dirtied on purpose: detector broken")
			}
			for _, kc := range kernelCalls {
				kc.call()
				if xinuse()&4 != 0 {
					t.Errorf("%s returns with dirty YMM upper state (missing VZEROUPPER)", kc.name)
				}
			}
			return
		}
	}
	t.Log("XINUSE not available: timing math.Exp instead")
	base := expTime(func() {})
	if dirty := expTime(dirtyUpper); dirty < 5*base {
		t.Skipf("dirty upper state does not slow SSE code here (%v vs %v): cannot detect it", dirty, base)
	}
	for _, kc := range kernelCalls {
		if after := expTime(kc.call); after > 10*base {
			t.Errorf("math.Exp after %s: %v vs %v before (missing VZEROUPPER?)", kc.name, after, base)
		}
	}
}

var expSink float64

// expTime returns the fastest of several timings of a math.Exp loop run
// straight after before(), so noise from other processes only adds time.
func expTime(before func()) time.Duration {
	best := time.Duration(math.MaxInt64)
	for range 7 {
		before()
		start := time.Now()
		s := 0.0
		for i := range 20000 {
			s += math.Exp(float64(i&63) * 0.01)
		}
		best = min(best, time.Since(start))
		expSink += s
	}
	return best
}
