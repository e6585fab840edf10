package reflector

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/hivemem/hivemem/internal/memfile"
	"github.com/hivemem/hivemem/internal/summarize"
)

// Abort reasons. Every condensation that does not swap the file ends with
// exactly one of these, in the condense-abort event, the Result and the
// backoff state. The memory file is untouched by every abort. Where an
// abort means what one of the harness's reflector's reasons means, it has
// that name (backup-failed, summarize-failed, swap-failed,
// structure-missing-region, empty-condensed, not-smaller,
// pinned-line-dropped, recent-section-altered), so one hive log reads the
// same whichever program condensed.
const (
	// ReasonLocked: the memory, archive or state file's lock stayed busy
	// for the whole lock timeout.
	ReasonLocked = "locked"
	// ReasonReadFailed: the memory file could not be read.
	ReasonReadFailed = "read-failed"
	// ReasonParseFailed: the memory file is not text (invalid UTF-8 or NUL
	// bytes), so it cannot be rewritten byte for byte.
	ReasonParseFailed = "parse-failed"
	// ReasonSummarizerConfig: the configured summariser cannot be built
	// (unknown provider, missing API key, ...).
	ReasonSummarizerConfig = "summarizer-config"
	// ReasonArchiveFailed: the evicted sections could not be appended to the
	// archive.
	ReasonArchiveFailed = "archive-failed"
	// ReasonSummarizeFailed: the summariser failed; the message is the
	// provider's.
	ReasonSummarizeFailed = summarize.ReasonFailed
	// ReasonChanged: the file changed during the summary other than by
	// appends at its end (or an append cannot be carried, e.g. it extends
	// the condensed region).
	ReasonChanged = "changed-during-condense"
	// ReasonRegionsMissing: the result lacks a pinned, condensed or Recent
	// region.
	ReasonRegionsMissing = "structure-missing-region"
	// ReasonRegionsDuplicated: the result has a region heading twice.
	ReasonRegionsDuplicated = "regions-duplicated"
	// ReasonRegionsOrder: the result's regions are not pinned, condensed,
	// Recent, then the kept sections.
	ReasonRegionsOrder = "regions-out-of-order"
	// ReasonCondensedEmpty: the condensed region of the result holds no text.
	ReasonCondensedEmpty = "empty-condensed"
	// ReasonNotSmaller: the result is over 95 % of the old size.
	ReasonNotSmaller = "not-smaller"
	// ReasonPinnedLost: a pinned fact or 📌 line of the old file is missing
	// from the result.
	ReasonPinnedLost = "pinned-line-dropped"
	// ReasonKeptChanged: a kept section is not byte-identical in the result,
	// or the kept sections' count or order differs.
	ReasonKeptChanged = "recent-section-altered"
	// ReasonOutsideChanged: something outside the evicted sections changed:
	// the header or the body under "## Recent".
	ReasonOutsideChanged = "outside-changed"
	// ReasonArchiveIncomplete: an evicted section is not verbatim in the
	// archive.
	ReasonArchiveIncomplete = "archive-incomplete"
	// ReasonBackupFailed: the pre-swap backup could not be written.
	ReasonBackupFailed = "backup-failed"
	// ReasonWriteFailed: the atomic write of the result failed (the old file
	// is still in place).
	ReasonWriteFailed = "swap-failed"
	// ReasonCanceled: the context ended (shutdown, timeout). Not counted as
	// a failure for backoff.
	ReasonCanceled = "canceled"
)

// AbortReasons lists every abort reason, for documentation and tests.
var AbortReasons = []string{
	ReasonLocked, ReasonReadFailed, ReasonParseFailed, ReasonSummarizerConfig,
	ReasonArchiveFailed, ReasonSummarizeFailed, ReasonChanged, ReasonRegionsMissing,
	ReasonRegionsDuplicated, ReasonRegionsOrder, ReasonCondensedEmpty, ReasonNotSmaller,
	ReasonPinnedLost, ReasonKeptChanged, ReasonOutsideChanged, ReasonArchiveIncomplete,
	ReasonBackupFailed, ReasonWriteFailed, ReasonCanceled,
}

// MaxSizeRatioPct is the largest result accepted, in percent of the old
// size: a condensation that does not save at least 5 % is not worth a swap.
const MaxSizeRatioPct = 95

// check is one verification failure.
type check struct {
	reason string
	msg    string
}

// verifyInput is what a result is checked against.
type verifyInput struct {
	plan    plan   // the plan of the file being replaced
	out     []byte // the result
	oldSize int    // size of the file the summary was made from
	carried int    // bytes agents appended since (carried into out)
	// archive holds the archive files' contents; nil skips the archive
	// check (dry run: nothing was archived).
	archive [][]byte
}

// verify checks a condensed result against the file it replaces and
// returns the parsed result, or the first rule it breaks.
func verify(in verifyInput) (*memfile.File, *check) {
	fail := func(reason, format string, args ...any) (*memfile.File, *check) {
		return nil, &check{reason: reason, msg: fmt.Sprintf(format, args...)}
	}
	nf, err := memfile.Parse(in.out)
	if err != nil {
		return fail(ReasonOutsideChanged, "result does not parse: %v", err)
	}
	old := in.plan.file

	// Regions present, unique and in order.
	idx := map[memfile.Kind][]int{}
	firstOrdinary := -1
	for i, s := range nf.Sections {
		idx[s.Kind] = append(idx[s.Kind], i)
		if s.Kind == memfile.KindSection && firstOrdinary < 0 {
			firstOrdinary = i
		}
	}
	for _, k := range []memfile.Kind{memfile.KindPinned, memfile.KindCondensed, memfile.KindRecent} {
		switch n := len(idx[k]); {
		case n == 0:
			return fail(ReasonRegionsMissing, "result has no %s region", k)
		case n > 1:
			return fail(ReasonRegionsDuplicated, "result has %d %s regions", n, k)
		}
	}
	p, c, r := idx[memfile.KindPinned][0], idx[memfile.KindCondensed][0], idx[memfile.KindRecent][0]
	if !(p < c && c < r) || (firstOrdinary >= 0 && firstOrdinary < r) {
		return fail(ReasonRegionsOrder, "result regions are not in the order pinned, condensed, Recent, sections")
	}

	if strings.TrimSpace(nf.Condensed()) == "" {
		return fail(ReasonCondensedEmpty, "condensed history is empty")
	}

	if newSize := len(in.out) - in.carried; newSize*100 > in.oldSize*MaxSizeRatioPct {
		return fail(ReasonNotSmaller, "result is %d bytes, over %d%% of the old %d bytes", newSize, MaxSizeRatioPct, in.oldSize)
	}

	have := map[string]bool{}
	for _, f := range nf.Pinned() {
		have[memfile.NormalizeFact(f)] = true
	}
	for _, f := range old.Pinned() {
		if !have[memfile.NormalizeFact(f)] {
			return fail(ReasonPinnedLost, "pinned fact %q is missing from the result", f)
		}
	}

	got := nf.Recent()
	if len(got) != len(in.plan.kept) {
		return fail(ReasonKeptChanged, "result has %d sections after the regions, want the %d kept", len(got), len(in.plan.kept))
	}
	for i, s := range in.plan.kept {
		if got[i].Raw != s.Raw {
			return fail(ReasonKeptChanged, "kept section %q is not byte-identical", s.Heading)
		}
	}

	if nf.Header != old.Header {
		return fail(ReasonOutsideChanged, "header changed")
	}
	if rb, want := nf.RecentBody(), old.RecentBody(); rb != want && rb != want+eolOf(in.out) {
		return fail(ReasonOutsideChanged, "text under ## Recent changed")
	}

	if in.archive != nil {
		ix := newArchiveIndex(in.archive, in.plan.evicted)
		for _, s := range in.plan.evicted {
			if !ix.has(s.Raw) {
				return fail(ReasonArchiveIncomplete, "evicted section %q is not verbatim in the archive", s.Heading)
			}
		}
	}
	return nf, nil
}

// eolOf returns the line ending of data's first line ("\n" if none).
func eolOf(data []byte) string {
	if i := bytes.IndexByte(data, '\n'); i > 0 && data[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}
