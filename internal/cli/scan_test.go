package cli

import (
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/redact/redacttest"
)

// TestScanListsFileLineKindAndExitsThree: secrets written while
// redaction was off are listed as file:line: kind, never their value,
// and scan exits 3; a clean home exits 0.
func TestScanListsFileLineKindAndExitsThree(t *testing.T) {
	root := edgeHome(t)
	if code, out, _ := edgeRun(t, "", "--home", root, "scan"); code != 0 || !strings.Contains(out, "no secrets") {
		t.Fatalf("clean home: exit %d: %s", code, out)
	}
	key := redacttest.New(5).Secret("anthropic-api-key").Value
	t.Setenv("HIVEMEM_REDACT_ENABLED", "false")
	if code, _, errOut := edgeRun(t, "", "--home", root, "remember", "alice", "first line\nkey "+key); code != 0 {
		t.Fatalf("remember: %s", errOut)
	}
	code, out, errOut := edgeRun(t, "", "--home", root, "scan")
	if code != exitSecretsFound || !strings.Contains(out, "hive/agents/alice/memory.md:") || !strings.Contains(out, ": anthropic-api-key") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, js, _ := edgeRun(t, "", "--home", root, "scan", "--json")
	if code != exitSecretsFound || !strings.Contains(js, `"kind": "anthropic-api-key"`) {
		t.Fatalf("--json: exit %d: %s", code, js)
	}
	if strings.Contains(out+js, key) {
		t.Fatal("scan shows the value")
	}
}
