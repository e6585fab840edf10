package web

import (
	"net/http"

	"github.com/hivemem/hivemem/internal/app"
)

// The settings API's types are the app's (App.ReadSettings,
// App.UpdateSettings), under the names package client and the tests use.
type (
	// SettingsResponse is GET and PATCH /api/v1/settings.
	SettingsResponse = app.SettingsResult
	// SettingsPatch is the body of PATCH /api/v1/settings.
	SettingsPatch = app.SettingsRequest
	// ReflectorPatch is SettingsPatch's [reflector] part.
	ReflectorPatch = app.ReflectorPatch
	// ManagerPatch is SettingsPatch's [manager] part.
	ManagerPatch = app.ManagerPatch
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
