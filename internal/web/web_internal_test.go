package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/hivemem/hivemem/internal/app"
)

// TestStatusOfMapsEveryKindOnce: the API answers each of the app's error
// kinds with its status wherever the error comes from, wrapped or not;
// a status a handler set, an oversize body and a plain failure keep theirs.
func TestStatusOfMapsEveryKindOnce(t *testing.T) {
	kinded := func(kind error) error { return fmt.Errorf("op: %w", fmt.Errorf("%w: detail", kind)) }
	for _, c := range []struct {
		name string
		err  error
		want int
	}{
		{"invalid", kinded(app.ErrInvalid), http.StatusBadRequest},
		{"not found", kinded(app.ErrNotFound), http.StatusNotFound},
		{"conflict", kinded(app.ErrConflict), http.StatusConflict},
		{"unavailable", kinded(app.ErrUnavailable), http.StatusServiceUnavailable},
		{"cancelled", fmt.Errorf("search: %w", context.Canceled), http.StatusServiceUnavailable},
		{"a handler's status", errBadRequest("q is empty"), http.StatusBadRequest},
		{"a handler's status over a kind", statusError(http.StatusTeapot, app.ErrNotFound), http.StatusTeapot},
		{"oversize body", fmt.Errorf("decode: %w", &http.MaxBytesError{Limit: 1}), http.StatusRequestEntityTooLarge},
		{"a plain failure", errors.New("disk on fire"), http.StatusInternalServerError},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := statusOf(c.err); got != c.want {
				t.Errorf("statusOf(%v) = %d, want %d", c.err, got, c.want)
			}
		})
	}
}
