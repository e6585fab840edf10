package minilm

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/kernel"
)

// TestGoldenVectorsBothKernels runs the golden comparisons again in child
// processes with HIVEMEM_KERNEL=go, avx2 and avx512, so the portable kernel,
// the AVX2-only one and AVX-512 in float32 are held to the same reference
// as the default (the kernel is chosen once at start-up; the default may
// be AVX-512 with bfloat16 products).
func TestGoldenVectorsBothKernels(t *testing.T) {
	if env := os.Getenv("HIVEMEM_KERNEL"); env != "" {
		got := kernel.Impl()
		if (env == "go" && got != "go") || got == "avx512+bf16" || (env == "avx2" && got == "avx512") {
			t.Fatalf("HIVEMEM_KERNEL=%s but kernel %s is in use", env, got)
		}
		return // the child: the parent asked for the golden tests by name
	}
	testModel(t) // skips or fails, like the golden tests, without the model
	for _, env := range []string{"go", "avx2", "avx512"} {
		cmd := exec.Command(os.Args[0], "-test.run", "^(TestGoldenVectors|TestLongGolden|TestGoldenVectorsBothKernels)$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "HIVEMEM_KERNEL="+env)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("golden tests with HIVEMEM_KERNEL=%s failed: %v\n%s", env, err, out)
		}
		for _, name := range []string{"TestGoldenVectors", "TestLongGolden"} {
			if !strings.Contains(string(out), "--- PASS: "+name) {
				t.Fatalf("%s did not pass with HIVEMEM_KERNEL=%s:\n%s", name, env, out)
			}
		}
		t.Logf("HIVEMEM_KERNEL=%s (default %s):\n%s", env, kernel.Impl(), out)
	}
}
