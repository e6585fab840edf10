package wiring

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/kernel"
	"github.com/hivemem/hivemem/internal/minilm"
	"github.com/hivemem/hivemem/internal/modelfetch"
	"github.com/hivemem/hivemem/internal/openaiembed"
	"github.com/hivemem/hivemem/internal/palace"
)

// ModelDir is where the MiniLM model is looked for.
func ModelDir(cfg config.Config) string {
	if cfg.Embedder.ModelDir != "" {
		return cfg.Embedder.ModelDir
	}
	return modelfetch.DefaultDir()
}

// ModelInstalled reports whether the MiniLM files are present in dir.
func ModelInstalled(dir string) bool {
	if dir == "" {
		return false
	}
	for _, f := range []string{"model.fp16.safetensors", "tokenizer.json", "config.json"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || !st.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// NewEmbedder builds the configured embedder. MiniLM is loaded lazily, on
// the first text to embed, so commands that never embed pay nothing for it.
// With provider "auto" and no model installed it returns nil (lexical-only)
// and a note saying how to fetch the model.
func NewEmbedder(ctx context.Context, cfg config.Config) (palace.Embedder, app.EmbedderInfo, error) {
	ec := cfg.Embedder
	switch ec.Provider {
	case "none":
		return nil, app.EmbedderInfo{Provider: "none", Note: "disabled by embedder.provider = none"}, nil
	case "openai":
		c, err := openaiembed.New(openaiembed.Config{BaseURL: ec.BaseURL, Model: ec.Model, APIKey: ec.APIKey, Timeout: ec.Timeout.Duration})
		if err != nil {
			return nil, app.EmbedderInfo{}, fmt.Errorf("embedder: %w", err)
		}
		if c.Dim() == 0 {
			// Learn the dimension now: the index records it with the model id.
			if _, err := c.Embed(ctx, []string{"dimension probe"}); err != nil {
				return nil, app.EmbedderInfo{}, fmt.Errorf("embedder: %w", err)
			}
		}
		return c, app.EmbedderInfo{Provider: "openai", Model: c.ModelID(), Dim: c.Dim()}, nil
	case "auto", "minilm":
		dir := ModelDir(cfg)
		if !ModelInstalled(dir) {
			note := fmt.Sprintf("MiniLM model not installed in %s: run `hivemem model fetch`", dir)
			if ec.Provider == "minilm" {
				return nil, app.EmbedderInfo{}, errors.New("embedder: " + note)
			}
			return nil, app.EmbedderInfo{Provider: "none", ModelDir: dir, Note: note}, nil
		}
		l := &lazyMiniLM{dir: dir}
		return l, app.EmbedderInfo{Provider: "minilm", Model: l.ModelID(), Dim: l.Dim(), Kernel: kernel.Impl(), ModelDir: dir}, nil
	}
	return nil, app.EmbedderInfo{}, fmt.Errorf("embedder: unknown provider %q", ec.Provider)
}

// miniLMDim is all-MiniLM-L6-v2's vector size, known before loading.
const miniLMDim = 384

// lazyMiniLM loads the model on first use.
type lazyMiniLM struct {
	dir  string
	once sync.Once
	m    *minilm.Model
	err  error
}

func (l *lazyMiniLM) load() (*minilm.Model, error) {
	l.once.Do(func() {
		l.m, l.err = minilm.Load(l.dir)
		if l.err == nil && l.m.Dim() != miniLMDim {
			l.m, l.err = nil, fmt.Errorf("model in %s has dimension %d, want %d", l.dir, l.m.Dim(), miniLMDim)
		}
	})
	return l.m, l.err
}

func (l *lazyMiniLM) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	m, err := l.load()
	if err != nil {
		return nil, err
	}
	return m.Embed(ctx, texts)
}

// CPUBound says MiniLM runs on this machine's cores, so the palace orders
// its calls, mining first (see palace.CPUBound).
func (l *lazyMiniLM) CPUBound() bool { return true }

// Dim and ModelID are fixed for the one model hivemem ships.
func (l *lazyMiniLM) Dim() int        { return miniLMDim }
func (l *lazyMiniLM) ModelID() string { return minilm.ID }
