package app

import (
	"log/slog"

	"github.com/hivemem/hivemem/internal/home"
)

// Home is the home the app is open on.
func (a *App) Home() home.Home { return a.home }

// Logger is the app's logger, for a front end that logs beside it.
func (a *App) Logger() *slog.Logger { return a.log }

// EmbedderInfo describes the embedder in use (Note says why there is
// none), for status output.
func (a *App) EmbedderInfo() EmbedderInfo { return a.embedder }
