package web

import (
	"net/http"

	"github.com/hivemem/hivemem/internal/app"
)

// RoutePurge takes a text out of the whole home (app.Purge).
const RoutePurge = "POST /api/v1/purge"

// PurgeRequest is the body of POST /api/v1/purge.
type PurgeRequest = app.PurgeRequest

func (h *Handler) apiPurge(w http.ResponseWriter, r *http.Request) error {
	var req PurgeRequest
	if err := decodeJSON(w, r, &req, false); err != nil {
		return err
	}
	res, err := h.app.Purge(r.Context(), req)
	return answer(w, res, err)
}
