package minilm

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/kernel"
)

// TestGoldenVectorsBothKernels runs the golden comparisons again in a child
// process with HIVEMEM_KERNEL=go, so the portable kernel is held to the same
// reference as the assembly one (the kernel is chosen once at start-up).
func TestGoldenVectorsBothKernels(t *testing.T) {
	if os.Getenv("HIVEMEM_KERNEL") == "go" {
		if kernel.Impl() != "go" {
			t.Fatalf("HIVEMEM_KERNEL=go but kernel %s is in use", kernel.Impl())
		}
		return // the child: the parent asked for the golden tests by name
	}
	testModel(t) // skips or fails, like the golden tests, without the model
	cmd := exec.Command(os.Args[0], "-test.run", "^(TestGoldenVectors|TestLongGolden|TestGoldenVectorsBothKernels)$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "HIVEMEM_KERNEL=go")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("golden tests with the portable kernel failed: %v\n%s", err, out)
	}
	for _, name := range []string{"TestGoldenVectors", "TestLongGolden"} {
		if !strings.Contains(string(out), "--- PASS: "+name) {
			t.Fatalf("%s did not pass with the portable kernel:\n%s", name, out)
		}
	}
	t.Logf("portable kernel (%s → go):\n%s", kernel.Impl(), out)
}
