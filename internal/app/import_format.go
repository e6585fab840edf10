package app

import (
	"fmt"
	"slices"
	"strings"
)

// CheckImportFormat refuses a format that is neither one of ImportFormats
// nor "auto" (or empty, which is auto): a command checks it before the
// agent and the files, as the format comes first on its command line.
func CheckImportFormat(format string) error {
	if format == "" || format == "auto" || slices.Contains(ImportFormats(), format) {
		return nil
	}
	return invalid(fmt.Errorf("import: unknown format %q (want one of %s, or auto)", format, strings.Join(ImportFormats(), ", ")))
}
