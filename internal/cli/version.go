package cli

import (
	"context"
	"io"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// Version is this binary's version: -ldflags "-X ...cli.Version=v1.2.3"
// sets it; otherwise it comes from the build information Go stamps into
// the binary (the module version for `go install …@version`, the VCS
// revision when built from a checkout).
var Version string

func init() {
	if Version == "" {
		bi, _ := debug.ReadBuildInfo()
		Version = versionFrom(bi).String()
	}
}

// buildInfo is what `hivemem version` reports.
type buildInfo struct {
	Version  string `json:"version"`            // v1.2.3, a pseudo-version, or "devel"
	Revision string `json:"revision,omitempty"` // VCS commit, when built from a checkout
	Time     string `json:"time,omitempty"`     // the commit's time
	Modified bool   `json:"modified,omitempty"` // the checkout had uncommitted changes
	Go       string `json:"go,omitempty"`
	Note     string `json:"note,omitempty"` // why there is no revision
}

// versionFrom reads a build's information (nil when the binary has none).
func versionFrom(bi *debug.BuildInfo) buildInfo {
	if bi == nil {
		return buildInfo{Version: "devel", Note: "no build information in the binary"}
	}
	v := buildInfo{Version: bi.Main.Version, Go: bi.GoVersion}
	if v.Version == "" || v.Version == "(devel)" {
		v.Version = "devel"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	if v.Revision == "" && v.Version == "devel" {
		v.Note = "built without VCS information (-buildvcs=false, or outside a git checkout)"
	}
	return v
}

// String is the one-line version: "v1.2.3",
// "v0.0.0-20261201145337-9223ea6abcde+dirty" (a checkout's pseudo-version),
// "devel (rev 9223ea6abcde, modified)".
func (v buildInfo) String() string {
	var extra []string
	if r := v.Revision; r != "" {
		if len(r) > 12 {
			r = r[:12]
		}
		// A pseudo-version already names the commit and, with "+dirty",
		// uncommitted changes.
		if !strings.Contains(v.Version, r) {
			extra = append(extra, "rev "+r)
		}
		if v.Modified && !strings.HasSuffix(v.Version, "+dirty") {
			extra = append(extra, "modified")
		}
	}
	if v.Note != "" {
		extra = append(extra, v.Note)
	}
	if len(extra) == 0 {
		return v.Version
	}
	return v.Version + " (" + strings.Join(extra, ", ") + ")"
}

func newVersionCommand(g *globals) *cobra.Command {
	var asJSON bool
	cmd := noArgsCommand("version", "Print hivemem's version (module version, VCS revision, Go version)", func(context.Context) error {
		bi, _ := debug.ReadBuildInfo()
		v := versionFrom(bi)
		if asJSON {
			return writeJSON(g.stdout, v)
		}
		_, err := io.WriteString(g.stdout, "hivemem version "+Version+" "+v.Go+"\n")
		return err
	})
	jsonFlag(cmd, &asJSON)
	return cmd
}
