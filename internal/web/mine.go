package web

import (
	"net/http"

	"github.com/hivemem/hivemem/internal/app"
)

// MineRequest is the body of POST /api/v1/mine: empty (or {}) mines the
// whole hive, {"agent": "<id>"} one agent's directory.
type MineRequest struct {
	Agent string `json:"agent,omitempty"`
}

// MineResponse is what POST /api/v1/mine did: the app's mine result, the
// same object as `hivemem mine --json`.
type MineResponse = app.MineResult

// apiMine is the harness's "mine now": it mines at once instead of
// waiting for the manager's watcher or scan, under the palace write lock,
// and logs a mine event. With manager.mining off it is refused (409).
func (h *Handler) apiMine(w http.ResponseWriter, r *http.Request) error {
	var req MineRequest
	if err := decodeJSON(w, r, &req, true); err != nil {
		return err
	}
	res, err := h.app.Mine(r.Context(), app.MineRequest{Agent: req.Agent, IfMining: true, By: "api"})
	return answer(w, res, err)
}
