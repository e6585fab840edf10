package app

import "testing"

// TestMemoryPutsEverySectionInOneRegion: pinned and condensed sections
// stand in their regions; the "## Recent" marker and every ordinary
// section, above the regions or in a file never condensed too, in the
// recent one (what status counts as sections).
func TestMemoryPutsEverySectionInOneRegion(t *testing.T) {
	const pinned, condensed = "## 📌 Durable facts (pinned — never condensed)\n- F.\n", "## 🗜 Condensed history\n- C.\n"
	cases := []struct {
		name, file string
		regions    []string
	}{
		{"never condensed", "# M\n\n## a\nA.\n## b\nB.\n", []string{"recent", "recent"}},
		{"condensed", "# M\n" + pinned + condensed + "## Recent\n## a\nA.\n", []string{"pinned", "condensed", "recent", "recent"}},
		{"a section above the regions", "# M\n## early\nE.\n" + pinned + condensed + "## Recent\n## a\nA.\n",
			[]string{"recent", "pinned", "condensed", "recent", "recent"}},
		{"pinned only", "# M\n" + pinned + "## a\nA.\n", []string{"pinned", "recent"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := MemoryOf(MemoryFile{Agent: "a", Data: []byte(c.file)})
			if m.ParseError != "" || len(m.Sections) != len(c.regions) {
				t.Fatalf("parsed %d sections (%s), want %d", len(m.Sections), m.ParseError, len(c.regions))
			}
			whole := m.Header
			for i, s := range m.Sections {
				if s.Region != c.regions[i] {
					t.Errorf("section %d (%s) is in region %q, want %q", i, s.Heading, s.Region, c.regions[i])
				}
				whole += s.Raw
			}
			if whole != c.file {
				t.Errorf("header and sections give %q, not the file", whole)
			}
			recent, _ := m.RegionText(RegionRecent)
			var want string
			for _, s := range m.Sections {
				if s.Region == RegionRecent {
					want += s.Raw
				}
			}
			if recent != want {
				t.Errorf("RegionText(recent) = %q, want %q", recent, want)
			}
		})
	}
}
