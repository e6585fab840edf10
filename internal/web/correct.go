package web

import (
	"errors"
	"net/http"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/palace"
)

// Routes of the writes and corrections of one agent's memory.
const (
	RouteRemember = "POST /api/v1/agents/{agent}/remember"
	RoutePin      = "POST /api/v1/agents/{agent}/pin"
	RouteUnpin    = "POST /api/v1/agents/{agent}/unpin"
	RouteForget   = "POST /api/v1/agents/{agent}/forget"
)

// Bodies of the correction endpoints: the app's requests, with the agent
// from the path.
type (
	// RememberRequest is the body of POST .../remember.
	RememberRequest = app.RememberRequest
	// PinRequest is the body of POST .../pin.
	PinRequest = app.PinRequest
	// UnpinRequest is the body of POST .../unpin.
	UnpinRequest = app.UnpinRequest
	// ForgetRequest is the body of POST .../forget.
	ForgetRequest = app.ForgetRequest
)

// writeError maps a write's errors onto HTTP statuses: a bad request
// (validation, no such section or fact) is 400.
func writeError(err error) error {
	if errors.Is(err, palace.ErrBadQuery) {
		return statusError(http.StatusBadRequest, err)
	}
	return err
}

// agentBody decodes a JSON body into v and checks that an agent it names
// is the path's: the path says whose memory changes.
func agentBody(w http.ResponseWriter, r *http.Request, v any, agent *string) error {
	if err := decodeJSON(w, r, v, false); err != nil {
		return err
	}
	id := r.PathValue("agent")
	if *agent != "" && *agent != id {
		return errBadRequest("agent %q in the body is not the path's %q", *agent, id)
	}
	*agent = id
	return nil
}

func (h *Handler) apiRemember(w http.ResponseWriter, r *http.Request) error {
	var req RememberRequest
	if err := agentBody(w, r, &req, &req.Agent); err != nil {
		return err
	}
	res, err := h.app.Remember(r.Context(), req)
	if err != nil {
		return writeError(err)
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (h *Handler) apiPin(w http.ResponseWriter, r *http.Request) error {
	var req PinRequest
	if err := agentBody(w, r, &req, &req.Agent); err != nil {
		return err
	}
	res, err := h.app.Pin(r.Context(), req)
	if err != nil {
		return writeError(err)
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (h *Handler) apiUnpin(w http.ResponseWriter, r *http.Request) error {
	var req UnpinRequest
	if err := agentBody(w, r, &req, &req.Agent); err != nil {
		return err
	}
	res, err := h.app.Unpin(r.Context(), req)
	if err != nil {
		return writeError(err)
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (h *Handler) apiForget(w http.ResponseWriter, r *http.Request) error {
	var req ForgetRequest
	if err := agentBody(w, r, &req, &req.Agent); err != nil {
		return err
	}
	res, err := h.app.Forget(r.Context(), req)
	if err != nil {
		return writeError(err)
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
