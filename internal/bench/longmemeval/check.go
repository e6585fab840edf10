package longmemeval

import (
	"fmt"

	"github.com/hivemem/hivemem/internal/palace"
)

// CheckRun checks the settings of a run as `hivemem bench longmemeval`
// takes them: limit (LoadOptions.Limit) and embedSample 0 or more,
// results a number of hits search takes.
func CheckRun(limit, results, embedSample int) error {
	if limit < 0 {
		return fmt.Errorf("bench longmemeval: --limit must be 0 or more, got %d", limit)
	}
	if err := palace.ValidateResults(results, palace.MaxResults); err != nil {
		return fmt.Errorf("bench longmemeval: --results: %w", err)
	}
	if embedSample < 0 {
		return fmt.Errorf("bench longmemeval: --embedder-sample must be 0 or more, got %d", embedSample)
	}
	return nil
}
