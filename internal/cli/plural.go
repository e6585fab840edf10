package cli

import "github.com/dustin/go-humanize/english"

// plural is n and word, with an "s" unless n is 1: "1 file", "2 files".
func plural(n int, word string) string { return english.Plural(n, word, word+"s") }
