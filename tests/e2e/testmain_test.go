package e2e

import (
	"testing"

	"github.com/hivemem/hivemem/internal/hometest/testenv"
)

// TestMain runs the tests without the HIVEMEM_* settings of the
// environment they are run in (testenv).
func TestMain(m *testing.M) { testenv.Main(m) }
