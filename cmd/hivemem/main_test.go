package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/cli"
	"github.com/hivemem/hivemem/internal/modelfetch"
	"github.com/hivemem/hivemem/internal/store/postgres/pgtest"
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
				return app.ModelInstalled(realModel), nil
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
