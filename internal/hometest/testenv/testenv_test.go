package testenv

import (
	"os"
	"testing"
)

// TestClear: Clear unsets hivemem's settings and keeps the variables a
// test run is given on purpose, and the ones not hivemem's.
func TestClear(t *testing.T) {
	cases := []struct {
		name string
		kept bool
	}{
		{"HIVEMEM_MODEL_SOURCE", false},
		{"HIVEMEM_AGENT", false},
		{"HIVEMEM_HOME", false},
		{"HIVEMEM_REFLECTOR_MIN_BYTES", false},
		{"HIVEMEM_NO_SUCH_KEY", false},
		{"HIVEMEM_MODEL_DIR", true},
		{"HIVEMEM_TEST_POSTGRES_DSN", true},
		{"HIVEMEM_STORE_BENCH_REFRESH", true},
		{"NOT_HIVEMEM_AGENT", true},
	}
	for _, c := range cases {
		t.Setenv(c.name, "set by the user") // restored after the test
	}
	Clear()
	for _, c := range cases {
		if _, ok := os.LookupEnv(c.name); ok != c.kept {
			t.Errorf("%s: kept %v, want %v", c.name, ok, c.kept)
		}
	}
}
