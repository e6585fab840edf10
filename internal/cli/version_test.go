package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionFromBuildInfo(t *testing.T) {
	rev := "9223ea682a795a259350d0d0314d0c358676c669"
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev},
			{Key: "vcs.time", Value: "2026-11-29T19:53:43Z"}, {Key: "vcs.modified", Value: modified}}
	}
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"no build info", nil, "devel (no build information in the binary)"},
		{"go install of a release", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3"},
		{"checkout", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261129195343-9223ea682a79"}, Settings: vcs("false")},
			"v0.0.0-20261129195343-9223ea682a79"},
		{"dirty checkout", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261129195343-9223ea682a79+dirty"}, Settings: vcs("true")},
			"v0.0.0-20261129195343-9223ea682a79+dirty"},
		{"devel with a revision", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("true")},
			"devel (rev 9223ea682a79, modified)"},
		{"-buildvcs=false", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
			"devel (built without VCS information (-buildvcs=false, or outside a git checkout))"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := versionFrom(tc.bi).String(); got != tc.want {
				t.Errorf("version = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestVersionStampedFromCheckout builds hivemem in a clone of this checkout
// and holds --version and `hivemem version` to the clone's commit, then to
// "+dirty" once a file changes.
func TestVersionStampedFromCheckout(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed: the VCS stamp needs a git checkout")
	}
	top, err := exec.Command(git, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout (%v): nothing to stamp the version from", err)
	}
	dir := filepath.Join(t.TempDir(), "clone")
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		// .ci/run builds with -buildvcs=false; a user's build stamps.
		cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=true", "GOTOOLCHAIN=local")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	src := strings.TrimSpace(string(top))
	if out, err := exec.Command(git, "clone", "-q", src, dir).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	// The clone gets this checkout's uncommitted changes as one commit, so
	// that the binary built is this code.
	changed, err := exec.Command(git, "-C", src, "ls-files", "-z", "-m", "-o", "--exclude-standard").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Split(string(changed), "\x00") {
		data, err := os.ReadFile(filepath.Join(src, f))
		if f == "" || err != nil { // a deleted file is listed as modified
			continue
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(git, "add", "-A")
	run(git, "-c", "user.name=test", "-c", "user.email=test@example.invalid", "commit", "-q", "--allow-empty", "-m", "working tree")
	rev := strings.TrimSpace(run(git, "rev-parse", "HEAD"))[:12]
	bin := filepath.Join(t.TempDir(), "hivemem")
	run("go", "build", "-o", bin, "./cmd/hivemem")
	flag, cmd := run(bin, "--version"), run(bin, "version")
	if !strings.Contains(flag, rev) || strings.Contains(flag, "+dirty") || !strings.HasPrefix(cmd, strings.TrimSpace(flag)+" go1.") {
		t.Fatalf("clean clone at %s: --version %q, version %q", rev, flag, cmd)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("go", "build", "-o", bin, "./cmd/hivemem")
	if flag := run(bin, "--version"); !strings.Contains(flag, rev) || !strings.Contains(flag, "+dirty") {
		t.Fatalf("changed clone: --version %q, want %s and +dirty", flag, rev)
	}
}
