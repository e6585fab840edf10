package memfile

import (
	"strings"
	"testing"
)

// bigFile is a memory file at the condensation budget (about 128 KiB).
func bigFile() []byte {
	var b strings.Builder
	b.WriteString(string(Template("bench", "Bench")))
	for i := 0; b.Len() < 128<<10; i++ {
		b.WriteString("## 2026-01-02 — section\n📌 a pinned line\nsome text that an agent wrote, with `code` and words.\n```\n## in code\n```\n\n")
	}
	return []byte(b.String())
}

func BenchmarkParse(b *testing.B) {
	data := bigFile()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		f, err := Parse(data)
		if err != nil {
			b.Fatal(err)
		}
		_ = f.Pinned()
	}
}

func BenchmarkAppendSection(b *testing.B) {
	data := bigFile()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := AppendSection(data, "2026-02-03 — new", "a body\n## escaped\n"); err != nil {
			b.Fatal(err)
		}
	}
}
