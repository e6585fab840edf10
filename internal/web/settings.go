package web

import (
	"net/http"

	"github.com/hivemem/hivemem/internal/app"
)

func (h *Handler) apiSettings(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, h.app.ReadSettings())
	return nil
}

func (h *Handler) apiUpdateSettings(w http.ResponseWriter, r *http.Request) error {
	var p app.SettingsRequest
	if err := decodeJSON(w, r, &p, false); err != nil {
		return err
	}
	res, err := h.app.UpdateSettings(r.Context(), p)
	return answer(w, res, err)
}
