package palace

import (
	"bytes"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/hivemem/hivemem/internal/atomicio"
)

// maxGitignoreBytes bounds the .gitignore files the miner reads; a larger
// one is skipped with a warning (no real ignore file is that large).
const maxGitignoreBytes = 1 << 20

// ignoreRules holds the .gitignore patterns of a mined tree, read as the
// walk enters each directory, with git's semantics (go-git's matcher):
// negation, directory-only patterns, anchoring, "**", and a deeper file's
// patterns over its parents'. A harness lists the files of an agent
// directory that are not memory (settings.json, inbox/, .codex/) in it.
type ignoreRules struct {
	root     string
	patterns []gitignore.Pattern
	matcher  gitignore.Matcher
}

func newIgnoreRules(root string) *ignoreRules { return &ignoreRules{root: root} }

// parts is path relative to the walk's root, split into its components
// (nil for the root itself).
func (r *ignoreRules) parts(path string) []string {
	rel, err := filepath.Rel(r.root, path)
	if err != nil || rel == "." {
		return nil
	}
	return strings.Split(filepath.ToSlash(rel), "/")
}

// enter reads dir's .gitignore, if it has one. The returned reason is
// why an existing .gitignore could not be used ("" when there is none or
// it was read).
func (r *ignoreRules) enter(dir string) string {
	p := filepath.Join(dir, ".gitignore")
	data, err := atomicio.ReadRegular(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ""
	case err != nil:
		return "unreadable .gitignore, not applied: " + err.Error()
	case len(data) > maxGitignoreBytes:
		return "a .gitignore over 1 MiB, not applied"
	}
	domain := r.parts(dir)
	n := len(r.patterns)
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		s := strings.TrimSuffix(string(line), "\r")
		if strings.HasPrefix(s, "#") || strings.TrimSpace(s) == "" {
			continue
		}
		r.patterns = append(r.patterns, gitignore.ParsePattern(s, domain))
	}
	if len(r.patterns) > n {
		r.matcher = gitignore.NewMatcher(r.patterns)
	}
	return ""
}

// ignored reports whether path (inside the root, not the root) is ignored.
func (r *ignoreRules) ignored(path string, isDir bool) bool {
	if r.matcher == nil {
		return false
	}
	parts := r.parts(path)
	return parts != nil && r.matcher.Match(parts, isDir)
}
