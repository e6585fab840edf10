package web

import (
	"context"
	"net/http"

	"github.com/hivemem/hivemem/internal/app"
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
		return answer(w, res, err) // the app's error kinds mapped in one place (appError)
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
