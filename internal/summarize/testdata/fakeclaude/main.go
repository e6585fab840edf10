// Command fakeclaude plays the claude CLI for the summarize tests. The mode
// comes from FAKECLAUDE_MODE; it records its argv, working directory and
// stdin as JSON to FAKECLAUDE_RECORD so the test can check how it was run.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

const reply = `{"condensed": "- 2026-11-29 fixed the flaky login test in auth/login_test.go", "hoist": ["Run tests with go test ./...", "Use flock for the file lock"]}`

func main() {
	mode := os.Getenv("FAKECLAUDE_MODE")
	if mode == "child" {
		time.Sleep(time.Minute)
		return
	}
	stdin, _ := io.ReadAll(os.Stdin)
	if path := os.Getenv("FAKECLAUDE_RECORD"); path != "" {
		cwd, _ := os.Getwd()
		rec, _ := json.Marshal(map[string]any{"args": os.Args[1:], "cwd": cwd, "stdin": string(stdin)})
		if err := os.WriteFile(path, rec, 0o600); err != nil {
			fmt.Fprintln(os.Stderr, "fakeclaude:", err)
			os.Exit(3)
		}
	}
	switch mode {
	case "valid":
		envelope(false, "success", reply)
	case "fenced":
		envelope(false, "success", "```json\n"+reply+"\n```")
	case "array":
		out, _ := json.Marshal([]map[string]any{
			{"type": "system", "subtype": "init"},
			{"type": "assistant", "message": map[string]any{"content": "thinking"}},
			{"type": "result", "subtype": "success", "is_error": false, "result": reply},
		})
		os.Stdout.Write(out)
	case "garbage":
		fmt.Print("this is not JSON at all\n")
	case "prose":
		envelope(false, "success", "Sure! Here is the summary you asked for.")
	case "is-error":
		envelope(true, "success", "Invalid API key · Please run /login")
	case "max-turns":
		envelope(false, "error_max_turns", "")
	case "exit":
		fmt.Fprintln(os.Stderr, "Error: model 'nope' not found")
		os.Exit(2)
	case "hang":
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), "FAKECLAUDE_MODE=child")
		child.Stdout, child.Stderr = os.Stdout, os.Stderr // holds our pipes, like a real helper would
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "fakeclaude:", err)
			os.Exit(3)
		}
		pids := fmt.Sprintf("%d\n%d\n", os.Getpid(), child.Process.Pid)
		if err := os.WriteFile(os.Getenv("FAKECLAUDE_PIDS"), []byte(pids), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, "fakeclaude:", err)
			os.Exit(3)
		}
		time.Sleep(time.Minute)
	default:
		fmt.Fprintf(os.Stderr, "fakeclaude: unknown mode %q\n", mode)
		os.Exit(4)
	}
}

func envelope(isError bool, subtype, result string) {
	out, _ := json.Marshal(map[string]any{
		"type": "result", "subtype": subtype, "is_error": isError, "result": result,
		"session_id": "0b6e4a3c-0000-4000-8000-000000000000", "duration_ms": 1234, "num_turns": 1,
	})
	os.Stdout.Write(append(out, '\n'))
}
