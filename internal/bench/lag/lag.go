// Package lag measures the append-to-searchable lag of a real `hivemem
// run`, without and with concurrent hybrid-search load (`hivemem bench
// mine-lag`).
package lag

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hivemem/hivemem/internal/app"
	"github.com/hivemem/hivemem/internal/client"
	"github.com/hivemem/hivemem/internal/home"
	"github.com/hivemem/hivemem/internal/manager"
	"github.com/hivemem/hivemem/internal/palace"
	"github.com/hivemem/hivemem/internal/quantile"
)

// Options are the benchmark's settings: `hivemem bench mine-lag`'s flags.
type Options struct {
	Duration time.Duration // length of each phase
	Rate     float64       // appends per second
	Clients  int           // hybrid-search clients in the loaded phase
	Seed     int           // sections to seed the home with
	Binary   string        // the hivemem binary to run ("": this one)
	Keep     string        // build the home here and keep it ("": a temporary one)
	Log      io.Writer     // what the run starts and each phase's end (nil: nowhere)
}

// Phase is one phase of the mine-lag benchmark.
type Phase struct {
	Name    string `json:"name"`
	Clients int    `json:"clients"`
	Appends int    `json:"appends"`
	// Searchable counts the appends found within the phase's wait; when
	// some were not, their lag counts as the wait and the percentiles
	// are lower bounds.
	Searchable int     `json:"searchable"`
	P50        float64 `json:"lag_p50_s"`
	P99        float64 `json:"lag_p99_s"`
	Max        float64 `json:"lag_max_s"`
	Searches   int64   `json:"load_searches"`
	SearchP50  float64 `json:"load_search_p50_ms,omitempty"`
	SearchErrs int64   `json:"load_search_errors,omitempty"`
	// StatusLag is what `status` reported as the last mine lag at the end
	// of the phase.
	StatusLag float64 `json:"status_mine_lag_s"`
}

// Run runs the benchmark: `hivemem run` (o.Binary) over a home seeded
// with o.Seed sections, a phase without search load and one with
// o.Clients hybrid-search clients; what it starts goes to o.Log (nil:
// nowhere).
func Run(ctx context.Context, o Options) ([]Phase, error) {
	logf := func(format string, a ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, format, a...)
		}
	}
	if o.Duration <= 0 || o.Rate <= 0 || o.Clients < 0 || o.Seed < 0 {
		return nil, errors.New("bench mine-lag: --duration and --rate must be positive, --clients and --seed not negative")
	}
	bin := o.Binary
	if bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("bench mine-lag: %w", err)
		}
		bin = exe
	} else if p, err := exec.LookPath(bin); err == nil {
		bin = p
	}
	dir := o.Keep
	if dir == "" {
		tmp, err := os.MkdirTemp("", "hivemem-lag-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	h := home.Home{Root: dir}
	if err := h.Init(); err != nil {
		return nil, err
	}
	if err := seedLagHome(h, o.Seed); err != nil {
		return nil, err
	}
	probe, err := h.MemoryPath("probe")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(probe), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(probe, []byte("# Memory — probe\n\n"), 0o644); err != nil {
		return nil, err
	}

	srv, err := startLagServer(ctx, bin, dir)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	logf("hivemem run at %s over %s (%d seed sections); search mode %s\n", srv.addr, dir, o.Seed, srv.mode)

	var phases []Phase
	for i, clients := range []int{0, o.Clients} {
		if i == 1 && clients == 0 {
			break
		}
		name := "no search load"
		if clients > 0 {
			name = fmt.Sprintf("%d hybrid-search clients", clients)
		}
		ph, err := srv.phase(ctx, probe, fmt.Sprintf("lagp%dx", i), o, clients)
		if err != nil {
			return nil, err
		}
		ph.Name = name
		phases = append(phases, ph)
		logf("phase %q done\n", name)
	}
	return phases, nil
}

// WriteText writes phases as a table, for o's rate and duration.
func WriteText(w io.Writer, o Options, phases []Phase) {
	fmt.Fprintf(w, "append-to-searchable lag at %.0f appends/s, %s per phase\n", o.Rate, o.Duration)
	fmt.Fprintf(w, "%-26s %8s %10s %8s %8s %8s %10s %12s %12s\n", "phase", "appends", "searchable", "p50 s", "p99 s", "max s", "searches", "search p50", "status lag")
	for _, p := range phases {
		lb := " "
		if p.Searchable < p.Appends {
			lb = "≥"
		}
		fmt.Fprintf(w, "%-26s %8d %10d %s%7.2f %s%7.2f %s%7.2f %10d %10.1fms %11.2fs\n", p.Name, p.Appends, p.Searchable,
			lb, p.P50, lb, p.P99, lb, p.Max, p.Searches, p.SearchP50, p.StatusLag)
	}
	if slices.ContainsFunc(phases, func(p Phase) bool { return p.Searchable < p.Appends }) {
		fmt.Fprintln(w, "≥: some appends were not searchable within 60 s of the last one; their lag counts as that wait")
	}
}

// lagWords make the seed sections and the load's queries.
var lagWords = strings.Fields(`deploy config review latency cache schema retry token build queue shard index
	migration rollback canary alert pager metric trace span budget quota tenant region replica
	failover backup restore vacuum compaction lease leader follower election snapshot journal`)

func lagSentence(r *rand.Rand, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = lagWords[r.IntN(len(lagWords))]
	}
	return strings.Join(w, " ")
}

// seedLagHome writes n sections over four agents.
func seedLagHome(h home.Home, n int) error {
	r := rand.New(rand.NewPCG(1, 2))
	var files [4]strings.Builder
	for i := range files {
		fmt.Fprintf(&files[i], "# Memory — seed%d\n\n", i)
	}
	for i := range n {
		fmt.Fprintf(&files[i%4], "## 2026-11-%02d — seed note %d\n%s.\n\n", 1+i%28, i, lagSentence(r, 40))
	}
	for i := range files {
		p, err := h.MemoryPath(fmt.Sprintf("seed%d", i))
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(files[i].String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// lagServer is the `hivemem run` under test.
type lagServer struct {
	cmd  *exec.Cmd
	done chan struct{}
	addr string
	mode string
	hc   *http.Client
}

func startLagServer(ctx context.Context, bin, dir string) (*lagServer, error) {
	s := &lagServer{done: make(chan struct{}), hc: &http.Client{Timeout: 30 * time.Second}}
	s.cmd = exec.Command(bin, "--home", dir, "run", "--http", "127.0.0.1:0", "--log-level", "warn")
	// The reflector stays off: condensing the probe file mid-phase would
	// measure the reflector, not mining.
	s.cmd.Env = append(os.Environ(), "HIVEMEM_HOME="+dir, "HIVEMEM_REFLECTOR_ENABLED=false")
	s.cmd.Stdout, s.cmd.Stderr = io.Discard, os.Stderr
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start hivemem run: %w", err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	h := home.Home{Root: dir}
	deadline := time.Now().Add(5 * time.Minute) // the seed is mined (and embedded) first
	for {
		select {
		case <-s.done:
			return nil, errors.New("bench mine-lag: hivemem run exited")
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, errors.New("bench mine-lag: hivemem run did not settle within 5 minutes")
		}
		if s.addr == "" {
			var inst manager.Instance
			data, err := os.ReadFile(filepath.Join(h.PalaceDir(), manager.PIDFile))
			if err != nil || json.Unmarshal(data, &inst) != nil || inst.HTTP == "" || inst.PID != s.cmd.Process.Pid {
				continue
			}
			s.addr = inst.HTTP
		}
		st, err := s.status(ctx)
		if err == nil && !st.LastScan.IsZero() && st.Pending == 0 {
			s.mode = st.SearchMode
			return s, nil
		}
	}
}

func (s *lagServer) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

func (s *lagServer) client() *client.Client {
	c := client.New(s.addr, "")
	c.HTTP = s.hc
	return c
}

func (s *lagServer) status(ctx context.Context) (app.ManagerStatus, error) {
	return s.client().Manager(ctx)
}

// found reports whether a lexical search finds marker.
func (s *lagServer) found(ctx context.Context, marker string) (bool, error) {
	res, err := s.client().Search(ctx, app.SearchRequest{Query: marker, Mode: palace.ModeLexical, Results: 1, Wing: "probe"})
	return len(res.Hits) > 0, err
}

// phase appends for o.Duration at o.Rate while clients search, and
// measures each append's lag.
func (s *lagServer) phase(ctx context.Context, probe, tag string, o Options, clients int) (Phase, error) {
	ph := Phase{Clients: clients}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// The load: hybrid searches with random queries, until the phase ends.
	var searches, serrs atomic.Int64
	var lmu sync.Mutex
	var loadMS []float64
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(c), 7))
			for ctx.Err() == nil {
				t0 := time.Now()
				_, err := s.client().Search(ctx, app.SearchRequest{Query: lagSentence(r, 4), Mode: palace.ModeHybrid, Results: 5})
				if ctx.Err() != nil {
					return
				}
				searches.Add(1)
				if err != nil {
					serrs.Add(1)
					time.Sleep(50 * time.Millisecond)
					continue
				}
				lmu.Lock()
				loadMS = append(loadMS, float64(time.Since(t0).Microseconds())/1000)
				lmu.Unlock()
			}
		})
	}
	if clients > 0 {
		time.Sleep(time.Second) // let the load build up
	}

	// The appends, and a watcher that finds each marker as soon as it is
	// searchable. Files are mined whole, in order, so once marker i is
	// found every earlier one is searchable too.
	n := int(o.Duration.Seconds() * o.Rate)
	sent := make([]time.Time, n)
	var sentN atomic.Int64
	lags := make([]float64, 0, n)
	missed := 0
	watchDone := make(chan error, 1)
	go func() {
		next := 0
		deadline := time.Time{}
		for next < n {
			if ctx.Err() != nil {
				watchDone <- ctx.Err()
				return
			}
			have := int(sentN.Load())
			if have == n && deadline.IsZero() {
				deadline = time.Now().Add(60 * time.Second)
			}
			if !deadline.IsZero() && time.Now().After(deadline) {
				// Never searchable within the wait: count the wait, a
				// lower bound of their lag.
				for now := time.Now(); next < n; next++ {
					lags = append(lags, now.Sub(sent[next]).Seconds())
					missed++
				}
				break
			}
			if next >= have {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			// The newest first: when it is in, all are.
			newest := have - 1
			ok, err := s.found(ctx, fmt.Sprintf("%s%05d", tag, newest))
			if err != nil && ctx.Err() == nil {
				watchDone <- err
				return
			}
			if !ok {
				ok, err = s.found(ctx, fmt.Sprintf("%s%05d", tag, next))
				if err != nil && ctx.Err() == nil {
					watchDone <- err
					return
				}
				newest = next
			}
			if !ok {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			now := time.Now()
			for ; next <= newest; next++ {
				lags = append(lags, now.Sub(sent[next]).Seconds())
			}
		}
		watchDone <- nil
	}()

	f, err := os.OpenFile(probe, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return ph, err
	}
	r := rand.New(rand.NewPCG(3, uint64(len(tag))))
	start := time.Now()
	interval := time.Duration(float64(time.Second) / o.Rate)
	for i := range n {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d)
		}
		sec := fmt.Sprintf("## 2026-12-01 — probe %d\n%s%05d %s.\n\n", i, tag, i, lagSentence(r, 20))
		sent[i] = time.Now()
		if _, err := f.WriteString(sec); err != nil {
			f.Close()
			return ph, err
		}
		sentN.Store(int64(i + 1))
	}
	if err := f.Close(); err != nil {
		return ph, err
	}
	werr := <-watchDone
	cancel()
	wg.Wait()
	if werr != nil {
		return ph, fmt.Errorf("bench mine-lag: watching the appends: %w", werr)
	}
	ph.Appends, ph.Searchable = n, len(lags)-missed
	ph.P50, ph.P99, ph.Max = quantile.NearestRank(lags, 50), quantile.NearestRank(lags, 99), quantile.NearestRank(lags, 100)
	ph.Searches, ph.SearchErrs = searches.Load(), serrs.Load()
	ph.SearchP50 = quantile.NearestRank(loadMS, 50)
	if st, err := s.status(context.Background()); err == nil {
		ph.StatusLag = st.MineLagSeconds
	}
	return ph, nil
}
