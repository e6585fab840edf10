package main

import (
	"context"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hivemem/hivemem/internal/cli"
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
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("HIVEMEM_HOME", env.WorkDir+"/home")
			env.Setenv("HIVEMEM_MODEL_DIR", env.WorkDir+"/no-model")
			env.Setenv("XDG_DATA_HOME", env.WorkDir+"/xdg")
			return nil
		},
	})
}
