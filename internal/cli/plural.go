package cli

import "strconv"

// plural is n and word, with an "s" unless n is 1: "1 file", "2 files".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
