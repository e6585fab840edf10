package mcpserver_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hivemem/hivemem/internal/config"
	"github.com/hivemem/hivemem/internal/mcpserver"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/store"
	"github.com/hivemem/hivemem/internal/wiring"
)

// benchQueries rotate so that no layer can answer from a cache.
var benchQueries = []string{
	"why did the login test fail",
	"database connection pool exhaustion",
	"how are rate limits configured",
	"who reviews pull requests",
	"what is planned for the next sprint",
	"go toolchain upgrade build time",
}

// needModel skips a benchmark that is only meaningful with the MiniLM model
// (hybrid search embeds every query).
func needModel(b *testing.B) {
	b.Helper()
	cfg, err := config.Load(filepath.Join(b.TempDir(), "none.toml"))
	if err != nil {
		b.Fatal(err)
	}
	if dir := wiring.ModelDir(cfg); !wiring.ModelInstalled(dir) {
		b.Skipf("MiniLM model not installed in %s: run `hivemem model fetch`", dir)
	}
}

// measure times one memory_search round trip per iteration and reports
// the p50 and p95 latencies.
func measure(b *testing.B, cs *mcp.ClientSession) {
	b.Helper()
	ctx := context.Background()
	search := func(i int) *mcp.CallToolResult {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpserver.ToolSearch,
			Arguments: map[string]any{"query": benchQueries[i%len(benchQueries)], "results": 5}})
		if err != nil || res.IsError {
			b.Fatalf("search: %v %v", err, res)
		}
		return res
	}
	for i := range 3 { // load the model, warm the caches
		res := search(i)
		if sc, _ := res.StructuredContent.(map[string]any); sc["mode"] != palace.ModeHybrid {
			b.Fatalf("search mode %v, want hybrid", sc["mode"])
		}
	}
	timeSearches(b, func(i int) { search(i) })
}

// timeSearches runs search(i) for i = 0, 1, … while b loops and reports
// the p50 and p95 latency of one search.
func timeSearches(b *testing.B, search func(i int)) {
	var lat []time.Duration
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		search(i)
		lat = append(lat, time.Since(t0))
	}
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
}

// BenchmarkSearchStdio: memory_search through `hivemem mcp` in a child
// process over stdin/stdout, on the demo hive, model loaded.
func BenchmarkSearchStdio(b *testing.B) {
	needModel(b)
	bin := hivememBinary(b)
	root := preparedHome(b, demoFiles(b), false)
	cmd := exec.Command(bin, "mcp", "--agent", "coder")
	cmd.Env = append(os.Environ(), "HIVEMEM_HOME="+root)
	cmd.Stderr = os.Stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	measure(b, cs)
}

// BenchmarkSearchHTTP: memory_search through HTTPHandler on a loopback
// listener, on the demo hive, model loaded.
func BenchmarkSearchHTTP(b *testing.B) {
	needModel(b)
	a := newHome(b, demoFiles(b), false)
	cs := connectHTTP(b, serveHTTP(b, mcpserver.Deps{App: a, Agent: "coder"}, ""), nil)
	measure(b, cs)
}

// BenchmarkSearchPalace is the baseline: the same searches straight on the
// palace, without MCP.
func BenchmarkSearchPalace(b *testing.B) {
	needModel(b)
	ctx := context.Background()
	h, cfg, err := wiring.LoadHome(preparedHome(b, demoFiles(b), false), false)
	if err != nil {
		b.Fatal(err)
	}
	bh, err := wiring.OpenBench(ctx, h, cfg, wiring.Options{}) // the app's own palace
	if err != nil {
		b.Fatal(err)
	}
	defer bh.App.Close()
	search := func(i int) {
		if _, err := bh.Palace.Search(ctx, palace.Query{Text: benchQueries[i%len(benchQueries)], Results: 5, Filter: store.Filter{}}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 3 {
		search(i)
	}
	timeSearches(b, search)
}
