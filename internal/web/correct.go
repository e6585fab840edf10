package web

import (
	"context"
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

// agentOp answers one of the correction endpoints: it decodes the body
// into the app's request, takes the agent from the path (an agent the
// body names must be the path's), runs op and writes its result.
func agentOp[Req, Res any](agent func(*Req) *string, op func(context.Context, Req) (Res, error)) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req Req
		if err := decodeJSON(w, r, &req, false); err != nil {
			return err
		}
		id, a := r.PathValue("agent"), agent(&req)
		if *a != "" && *a != id {
			return errBadRequest("agent %q in the body is not the path's %q", *a, id)
		}
		*a = id
		res, err := op(r.Context(), req)
		if err != nil {
			return writeError(err)
		}
		writeJSON(w, http.StatusOK, res)
		return nil
	}
}

func (h *Handler) apiRemember() apiFunc {
	return agentOp(func(r *RememberRequest) *string { return &r.Agent }, h.app.Remember)
}

func (h *Handler) apiPin() apiFunc {
	return agentOp(func(r *PinRequest) *string { return &r.Agent }, h.app.Pin)
}

func (h *Handler) apiUnpin() apiFunc {
	return agentOp(func(r *UnpinRequest) *string { return &r.Agent }, h.app.Unpin)
}

func (h *Handler) apiForget() apiFunc {
	return agentOp(func(r *ForgetRequest) *string { return &r.Agent }, h.app.Forget)
}
