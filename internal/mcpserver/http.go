package mcpserver

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/httpguard"
)

// HTTP identity: a client names the agent it acts for, and may narrow the
// scope, with a header or a query parameter (the header wins). Neither can
// widen what the handler's Deps allow.
const (
	AgentHeader = "X-Hivemem-Agent"
	ScopeHeader = "X-Hivemem-Scope"
	AgentParam  = "agent"
	ScopeParam  = "scope"
)

// maxCachedServers bounds the per-identity servers kept by HTTPHandler.
const maxCachedServers = 256

// HTTPHandler serves the same tools as New over MCP streamable HTTP, to be
// mounted at /mcp. It is stateless (every POST is a complete exchange; no
// session to expire or leak) and answers with plain JSON.
//
// The identity of a request comes from the X-Hivemem-Agent and
// X-Hivemem-Scope headers, or the agent and scope query parameters, on top
// of d: when d.Agent is set, a request naming another agent is refused
// (403); when d.Scope is own, a request asking for all is refused; a
// request may always narrow all to own. Without any agent, write tools need
// an agent argument, as over stdio.
//
// guard is applied in front (httpguard.Wrap: Host check against DNS
// rebinding on loopback, bearer token when configured, same-origin check,
// body cap); a guard that would expose memory beyond
// loopback without a token is refused here.
func HTTPHandler(d Deps, guard httpguard.Config) (http.Handler, error) {
	if err := guard.Validate(); err != nil {
		return nil, fmt.Errorf("mcp http: %w", err)
	}
	if err := d.check(); err != nil {
		return nil, err
	}
	d = d.withDefaults()
	if _, err := build(d); err != nil { // fail now, not on the first request
		return nil, err
	}
	hs := &httpServers{base: d, servers: map[identity]*mcp.Server{}}
	sdk := mcp.NewStreamableHTTPHandler(hs.server, &mcp.StreamableHTTPOptions{
		Stateless: true, JSONResponse: true, Logger: sdkLogger(d.Logger),
		// The guard's Host check (one for every route of hivemem run,
		// 421) is the DNS-rebinding protection; the SDK's own refuses
		// loopback names the others accept (LOCALHOST, foo.localhost).
		DisableLocalhostProtection: true,
	})
	return httpguard.Wrap(guard, hs.identify(sdk)), nil
}

// identity is who a request acts as.
type identity struct{ agent, scope string }

type identityKey struct{}

// httpServers keeps one server per identity, built on first use.
type httpServers struct {
	base    Deps
	mu      sync.Mutex
	servers map[identity]*mcp.Server
}

// identify resolves a request's identity before the MCP handler sees it,
// answering bad or widening identities with a plain HTTP error.
func (hs *httpServers) identify(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, status, err := hs.resolve(r)
		if err != nil {
			http.Error(w, err.Error(), status)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), identityKey{}, id)))
	})
}

func (hs *httpServers) resolve(r *http.Request) (identity, int, error) {
	pick := func(header, param string) string {
		if v := r.Header.Get(header); v != "" {
			return v
		}
		return r.URL.Query().Get(param)
	}
	agent, scope := pick(AgentHeader, AgentParam), pick(ScopeHeader, ScopeParam)
	base := hs.base
	if agent != "" {
		if err := home.ValidateAgentID(agent); err != nil {
			return identity{}, http.StatusBadRequest, fmt.Errorf("%s: %w", AgentHeader, err)
		}
		if base.Agent != "" && agent != base.Agent {
			return identity{}, http.StatusForbidden, fmt.Errorf("%s %q refused: this endpoint is bound to agent %q", AgentHeader, agent, base.Agent)
		}
	} else {
		agent = base.Agent
	}
	switch scope {
	case "":
		scope = base.Scope
	case ScopeOwn:
	case ScopeAll:
		if base.Scope == ScopeOwn {
			return identity{}, http.StatusForbidden, fmt.Errorf("%s all refused: this endpoint serves scope own", ScopeHeader)
		}
	default:
		return identity{}, http.StatusBadRequest, fmt.Errorf("%s %q: want own or all", ScopeHeader, scope)
	}
	if scope == ScopeOwn && agent == "" {
		return identity{}, http.StatusBadRequest, fmt.Errorf("scope own needs an agent (%s or ?%s=)", AgentHeader, AgentParam)
	}
	return identity{agent: agent, scope: scope}, 0, nil
}

// server is the SDK's getServer: the cached server of the request's
// identity. The SDK answers nil with 400.
func (hs *httpServers) server(r *http.Request) *mcp.Server {
	id, ok := r.Context().Value(identityKey{}).(identity)
	if !ok {
		return nil
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if srv := hs.servers[id]; srv != nil {
		return srv
	}
	d := hs.base
	d.Agent, d.Scope = id.agent, id.scope
	srv, err := build(d)
	if err != nil {
		d.Logger.Error("mcp http: cannot build server", "agent", id.agent, "scope", id.scope, "error", err)
		return nil
	}
	if len(hs.servers) >= maxCachedServers {
		// Servers are cheap to rebuild; a client cycling through agent ids
		// must not grow memory without bound.
		clear(hs.servers)
	}
	hs.servers[id] = srv
	d.Logger.Debug("mcp http: new identity", "agent", id.agent, "scope", id.scope)
	return srv
}
