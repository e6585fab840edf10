// Package testenv keeps a package's tests independent of the hivemem
// settings in the environment of whoever runs them: a user's
// HIVEMEM_MODEL_SOURCE (set for an offline install), HIVEMEM_AGENT or
// HIVEMEM_REFLECTOR_MIN_BYTES would otherwise change what the tests see.
// A test that depends on such a variable sets it (t.Setenv).
//
// It imports nothing of hivemem, so that every package's tests can use
// it, the ones hometest itself depends on included.
package testenv

import (
	"os"
	"strings"
	"testing"
)

// PassThrough are the HIVEMEM_* variables a test run takes from its
// environment on purpose: where the model is (`make test` fetches it
// there first), which kernel the vector code runs (scripts/bench-embed.sh),
// the browser tests' chromium and screenshots (scripts/ci-web.sh), the
// knobs of tests run by hand (the demo server, the churn seed, the store
// benchmarks' sizes) and the throwaway PostgreSQL servers' DSNs
// (HIVEMEM_TEST_*: scripts/pg-test.sh, .ci/run). They choose what a test
// runs on, never what hivemem's settings are.
var PassThrough = []string{
	"HIVEMEM_MODEL_DIR", "HIVEMEM_KERNEL", "HIVEMEM_ARTIFACTS", "HIVEMEM_CHROMIUM",
	"HIVEMEM_DEMO_ADDR", "HIVEMEM_DEMO_TOKEN", "HIVEMEM_DASHBOARD_PNG", "HIVEMEM_CHURN_SEED",
}

// passThroughPrefixes are prefixes of PassThrough variables.
var passThroughPrefixes = []string{"HIVEMEM_TEST_", "HIVEMEM_STORE_BENCH", "HIVEMEM_BENCH_"}

// Main is a package's TestMain: it clears the environment (Clear) and
// runs the tests.
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
func Main(m *testing.M) {
	Clear()
	os.Exit(m.Run())
}

// Clear unsets every HIVEMEM_* variable but the PassThrough ones, for the
// whole test binary: call it first in TestMain.
func Clear() {
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "HIVEMEM_") && !passes(name) {
			os.Unsetenv(name)
		}
	}
}

// passes reports whether name is a PassThrough variable.
func passes(name string) bool {
	for _, p := range PassThrough {
		if name == p {
			return true
		}
	}
	for _, p := range passThroughPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
