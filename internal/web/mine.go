package web

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"

	"github.com/hivemem/hivemem/internal/eventlog"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/palace"
)

// MineRequest is the body of POST /api/v1/mine: empty (or {}) mines the
// whole hive, {"agent": "<id>"} one agent's directory.
type MineRequest struct {
	Agent string `json:"agent,omitempty"`
}

// MineResponse is what POST /api/v1/mine did.
type MineResponse struct {
	Agent  string            `json:"agent,omitempty"`
	Path   string            `json:"path"` // what was mined, relative to the home
	Report palace.MineReport `json:"report"`
}

// apiMine is the harness's "mine now": it mines at once instead of
// waiting for the manager's watcher or scan, under the palace write lock,
// and logs a mine event. With manager.mining off it is refused (409).
func (h *Handler) apiMine(w http.ResponseWriter, r *http.Request) error {
	var req MineRequest
	if err := decodeJSON(w, r, &req, true); err != nil {
		return err
	}
	if !h.cfg().Manager.Mining {
		return statusError(http.StatusConflict, errors.New("mining is off (manager.mining = false): switch it on in Settings first"))
	}
	hm := h.app.Home
	path := hm.HiveDir()
	if req.Agent != "" {
		if err := home.ValidateAgentID(req.Agent); err != nil {
			return statusError(http.StatusBadRequest, fmt.Errorf("agent: %w", err))
		}
		mp, err := hm.MemoryPath(req.Agent)
		if err != nil {
			return statusError(http.StatusBadRequest, err)
		}
		path = filepath.Dir(mp)
		if st, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) || err == nil && !st.IsDir() {
			return errNotFound("no agent %s (no directory %s)", req.Agent, hm.Rel(path))
		}
	}
	rep, err := h.miner.Mine(r.Context(), path, palace.MineOptions{})
	if err != nil {
		return fmt.Errorf("mine %s: %w", hm.Rel(path), err)
	}
	if rep.Skipped == nil {
		rep.Skipped = []palace.Skip{}
	}
	if h.app.Events != nil && (rep.Changed > 0 || rep.FilesRemoved > 0) {
		if err := h.app.Events.Append(eventlog.Event{Kind: "mine", Agent: req.Agent, Data: map[string]any{
			"drawersAdded": rep.Added, "drawersRemoved": rep.Removed, "drawersKept": rep.Kept,
			"embedded": rep.Embedded, "filesRemoved": rep.FilesRemoved, "seconds": rep.Seconds, "by": "api",
		}}); err != nil {
			h.log.Warn("web: cannot log the mine event", "err", err)
		}
	}
	writeJSON(w, http.StatusOK, MineResponse{Agent: req.Agent, Path: hm.Rel(path), Report: rep})
	return nil
}
