package cli

import (
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/hometest"
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

// TestScanPurgeTakesEverySecretOutOfTheHome: secrets already in the home
// (written while redaction was off, copied into another agent's file and
// a backup) are purged by scan --purge without a prompt: no byte of any
// of them is left anywhere in the home, the index included, the command
// exits 0, and a second scan finds nothing.
func TestScanPurgeTakesEverySecretOutOfTheHome(t *testing.T) {
	root := edgeHome(t)
	gen := redacttest.New(11)
	key := gen.Secret("anthropic-api-key").Value
	gh := gen.Secret("github-pat").Value
	t.Setenv("HIVEMEM_REDACT_ENABLED", "false")
	for _, args := range [][]string{
		{"remember", "alice", "first line\nkey " + key},
		{"remember", "bob", "alice gave me " + key + " and " + gh},
		{"pin", "bob", "The CI token is " + gh},
		{"unpin", "bob", "The CI token is " + gh}, // a backup and the archive hold it too
	} {
		if code, _, errOut := edgeRun(t, "", append([]string{"--home", root}, args...)...); code != 0 {
			t.Fatalf("%v: %s", args, errOut)
		}
	}
	t.Setenv("HIVEMEM_REDACT_ENABLED", "true")
	code, out, errOut := edgeRun(t, "", "--home", root, "scan", "--purge")
	if code != 0 || !strings.Contains(out, "purging 2 distinct secrets") {
		t.Fatalf("scan --purge: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if strings.Contains(out+errOut, key) || strings.Contains(out+errOut, gh) {
		t.Fatal("scan --purge shows a value")
	}
	hometest.AssertNoneInHome(t, root, key, gh)
	if code, out, _ := edgeRun(t, "", "--home", root, "scan"); code != 0 || !strings.Contains(out, "no secrets") {
		t.Fatalf("after the purge: exit %d: %s", code, out)
	}
}
