package reflector

import (
	"strings"
	"testing"
	"time"
)

// TestTakenOutKeepsWhatTheBackupLacks: restoring a backup over a file
// takes out of it what the backup does not hold — a later section, an
// edited one, a pinned fact, condensed history — and takenOut gives each
// for the archive; what the backup holds (a section with other blank
// lines after it included) is not archived again.
func TestTakenOutKeepsWhatTheBackupLacks(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	const backup = "# Memory — alice (alice)\n\n## 2026-11-01 — deploys\nDeploys go out on Thursdays.\n\n## 2026-11-02 — logo\nThe logo is blue.\n"
	for _, c := range []struct {
		name, cur string
		want      []string // raw sections taken out, in order
	}{{
		name: "nothing later",
		cur:  backup,
	}, {
		name: "the same sections, other blank lines",
		cur:  "# Memory — alice (alice)\n\n## 2026-11-01 — deploys\nDeploys go out on Thursdays.\n## 2026-11-02 — logo\nThe logo is blue.\n\n\n",
	}, {
		name: "a later section",
		cur:  backup + "\n## 2026-12-05 — cache\nLATE-NOTE the cache is flushed at midnight.\n",
		want: []string{"## 2026-12-05 — cache\nLATE-NOTE the cache is flushed at midnight.\n"},
	}, {
		name: "an edited section",
		cur:  "# Memory — alice (alice)\n\n## 2026-11-01 — deploys\nDeploys go out on Fridays.\n\n## 2026-11-02 — logo\nThe logo is blue.\n",
		want: []string{"## 2026-11-01 — deploys\nDeploys go out on Fridays.\n\n"},
	}, {
		name: "pinned facts and condensed history",
		cur: "# Memory — alice (alice)\n\n## 📌 Durable facts (pinned — never condensed)\n- The shop runs on Go.\n## 🗜 Condensed history\n2026-11: deploys moved to Thursdays.\nFull text of evicted sections: hive/archive/alice/\n## Recent\n" +
			"## 2026-11-02 — logo\nThe logo is blue.\n",
		want: []string{"## 2026-12-06 — lines taken out by restoring backup B1\n- The shop runs on Go.\n2026-11: deploys moved to Thursdays.\n"},
	}, {
		name: "not a memory file",
		cur:  "# Memory — alice (alice)\n\n## 2026-12-05 — bytes\nkept \xff line\x00\n",
		want: []string{"## 2026-12-05 — bytes\nkept \uFFFD line\uFFFD\n"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, s := range takenOut([]byte(c.cur), []byte(backup), "B1", now) {
				got = append(got, s.Raw)
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("taken out:\n%q\nwant\n%q", got, c.want)
			}
		})
	}
}
