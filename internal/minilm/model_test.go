package minilm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/hivemem/hivemem/internal/modelfetch"
)

// readJSON decodes the JSON file at path into v.
func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// modelDir returns the installed model's directory, or skips the test.
func modelDir(t testing.TB) string {
	t.Helper()
	dir := modelfetch.DefaultDir()
	for _, f := range modelfetch.RequiredFiles {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("model not installed in %s (%s missing): CI must run `hivemem model fetch` first", dir, f)
			}
			t.Skipf("model not installed in %s (%s missing): run `hivemem model fetch` or set HIVEMEM_MODEL_DIR", dir, f)
		}
	}
	return dir
}

// loadModel and loadTokenizer load the installed model once for the whole
// test binary (testModel and testTokenizer skip first when there is none).
var (
	loadModel     = sync.OnceValues(func() (*Model, error) { return Load(modelfetch.DefaultDir()) })
	loadTokenizer = sync.OnceValues(func() (*Tokenizer, error) {
		return LoadTokenizer(filepath.Join(modelfetch.DefaultDir(), modelfetch.TokenizerFile))
	})
)

// testModel is the installed model.
func testModel(t testing.TB) *Model { return installed(t, loadModel) }

// testTokenizer is the installed model's tokenizer.
func testTokenizer(t testing.TB) *Tokenizer { return installed(t, loadTokenizer) }

// installed is what load loads from the installed model, or skips the test
// when there is none.
func installed[T any](t testing.TB, load func() (T, error)) T {
	t.Helper()
	modelDir(t)
	v, err := load()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// findShared looks for shared/<rel> in the ancestors of the working
// directory: the golden data lives beside the repository, not inside it.
func findShared(t testing.TB, rel string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		p := filepath.Join(dir, "shared", rel)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skipf("shared/%s not found in any parent directory of the package; golden comparison skipped", rel)
		}
		dir = parent
	}
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

func TestGoldenVectors(t *testing.T) {
	m := testModel(t)
	var golden struct {
		Sentences []string    `json:"sentences"`
		Vectors   [][]float64 `json:"vectors"`
	}
	readJSON(t, findShared(t, "golden/minilm_l6_v2.json"), &golden)
	if len(golden.Sentences) == 0 || len(golden.Sentences) != len(golden.Vectors) {
		t.Fatalf("golden file has %d sentences and %d vectors", len(golden.Sentences), len(golden.Vectors))
	}
	got, err := m.Embed(context.Background(), golden.Sentences)
	if err != nil {
		t.Fatal(err)
	}
	minCos := 1.0
	for i, s := range golden.Sentences {
		want := make([]float32, len(golden.Vectors[i]))
		for j, v := range golden.Vectors[i] {
			want[j] = float32(v)
		}
		if len(got[i]) != len(want) {
			t.Fatalf("%q: dim %d, want %d", s, len(got[i]), len(want))
		}
		c := cosine(got[i], want)
		minCos = min(minCos, c)
		if c <= 0.9999 {
			t.Errorf("%q: cosine %.6f to the reference, want > 0.9999", s, c)
		}
	}
	t.Logf("min cosine to reference over %d sentences: %.9f (1-cos = %.2e)", len(golden.Sentences), minCos, 1-minCos)
}

// TestLongGolden compares with reference vectors (testdata/long_golden.json,
// made by testdata/gen_long_golden.mjs) for inputs that fill or overflow the
// window and mix scripts and special tokens.
func TestLongGolden(t *testing.T) {
	m := testModel(t)
	var cases []struct {
		Text   string    `json:"text"`
		Vector []float32 `json:"vector"`
	}
	readJSON(t, "testdata/long_golden.json", &cases)
	texts := make([]string, len(cases))
	for i, c := range cases {
		texts[i] = c.Text
	}
	got, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	full, minCos := 0, 1.0
	for i, c := range cases {
		if n := len(m.Tokenizer().Encode(c.Text)); n == Window {
			full++
		}
		cs := cosine(got[i], c.Vector)
		minCos = min(minCos, cs)
		if cs <= 0.9999 {
			t.Errorf("%.40q: cosine %.6f to the reference, want > 0.9999", c.Text, cs)
		}
	}
	t.Logf("min cosine over %d texts: %.9f (1-cos = %.2e)", len(cases), minCos, 1-minCos)
	if full < 2 {
		t.Errorf("only %d golden texts fill the window; the file should cover truncation", full)
	}
}

func TestBatchInvariance(t *testing.T) {
	m := testModel(t)
	texts := []string{
		"short",
		"A somewhat longer sentence about the quarterly engineering report and its findings.",
		"",
		strings.Repeat("very long input that goes past the window ", 60),
		"東京 🙂 naïve",
	}
	batch, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		alone, err := m.Embed(context.Background(), []string{text})
		if err != nil {
			t.Fatal(err)
		}
		if len(alone[0]) != m.Dim() {
			t.Fatalf("dim %d, want %d", len(alone[0]), m.Dim())
		}
		var maxDiff float64
		for j := range alone[0] {
			maxDiff = max(maxDiff, math.Abs(float64(alone[0][j]-batch[i][j])))
		}
		if maxDiff > 1e-5 {
			t.Errorf("text %d: vector differs by %g between alone and in a batch", i, maxDiff)
		}
		var norm float64
		for _, v := range batch[i] {
			norm += float64(v) * float64(v)
		}
		if math.Abs(norm-1) > 1e-5 {
			t.Errorf("text %d: squared norm %f, want 1", i, norm)
		}
	}
	// The same text twice in one batch gives the same vector.
	twice, err := m.Embed(context.Background(), []string{texts[1], texts[0], texts[1]})
	if err != nil {
		t.Fatal(err)
	}
	if c := cosine(twice[0], twice[2]); c < 0.999999 {
		t.Errorf("duplicate text: cosine %f", c)
	}
}

func TestManyBatches(t *testing.T) {
	m := testModel(t)
	// More texts than one forward pass takes, to cover batch splitting.
	texts := make([]string, maxBatchTexts+3)
	for i := range texts {
		texts[i] = fmt.Sprintf("note number %d about topic %d", i, i%5)
	}
	got, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(got), len(texts))
	}
	last, err := m.Embed(context.Background(), texts[len(texts)-1:])
	if err != nil {
		t.Fatal(err)
	}
	if c := cosine(got[len(got)-1], last[0]); c < 0.999999 {
		t.Errorf("last text: cosine %f between batch and alone", c)
	}
	// Related texts are closer than unrelated ones.
	v, err := m.Embed(context.Background(), []string{"A dog runs in the park", "The dog is running in the park", "Quarterly tax filing deadlines"})
	if err != nil {
		t.Fatal(err)
	}
	if near, far := cosine(v[0], v[1]), cosine(v[0], v[2]); near <= far+0.3 {
		t.Errorf("similar %f vs unrelated %f", near, far)
	}
}

func TestEmbedCancelled(t *testing.T) {
	m := testModel(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := m.Embed(ctx, []string{"hello"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	got, err := m.Embed(context.Background(), nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("empty input: %v, %v", got, err)
	}
}

func TestModelAccessors(t *testing.T) {
	m := testModel(t)
	if m.Dim() != 384 || m.ModelID() != "all-MiniLM-L6-v2" || m.Tokenizer() == nil {
		t.Errorf("Dim %d, ModelID %q, Tokenizer %v", m.Dim(), m.ModelID(), m.Tokenizer())
	}
}

// TestConcurrentEmbed runs several Embed calls at once (run with -race).
func TestConcurrentEmbed(t *testing.T) {
	m := testModel(t)
	want, err := m.Embed(context.Background(), []string{"concurrent use of one model"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			got, err := m.Embed(context.Background(), []string{"concurrent use of one model", "another text"})
			if err != nil {
				errs <- err
				return
			}
			if c := cosine(got[0], want[0]); c < 0.999999 {
				errs <- fmt.Errorf("cosine %f", c)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// benchSentences returns n 40-word sentences built from
// testdata/bench_words.txt: sentence i is words (7i+j) mod len(words) for
// j < 40. scripts/bench-embed.mjs builds the same sentences from the same
// file, so the Go and Node figures are for identical input.
func benchSentences(tb testing.TB, n int) []string {
	tb.Helper()
	raw, err := os.ReadFile("testdata/bench_words.txt")
	if err != nil {
		tb.Fatal(err)
	}
	words := strings.Fields(string(raw))
	out := make([]string, n)
	for i := range out {
		s := make([]string, 40)
		for j := range s {
			s[j] = words[(i*7+j)%len(words)]
		}
		out[i] = strings.Join(s, " ")
	}
	return out
}

// BenchmarkEmbed40Words measures throughput on 40-word sentences in batches
// of 32, using all of GOMAXPROCS.
func BenchmarkEmbed40Words(b *testing.B) {
	benchEmbed(b, 32)
}

// BenchmarkEmbed40WordsSingly embeds the same 32 sentences one call each,
// as a caller with one text at a time would.
func BenchmarkEmbed40WordsSingly(b *testing.B) {
	benchEmbed(b, 1)
}

// benchEmbed embeds the 32 bench sentences per iteration, batch texts a
// call. Besides sentences/s it reports sentences per CPU-second (user +
// system time of the whole process), which other work on a shared machine
// disturbs much less than the wall clock: with GOMAXPROCS 1 it is the speed
// on an idle core.
func benchEmbed(b *testing.B, batch int) {
	m := testModel(b)
	texts := benchSentences(b, 32)
	tokens := 0
	for _, t := range texts {
		tokens += len(m.Tokenizer().Encode(t))
	}
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for b.Loop() {
		for i := 0; i < len(texts); i += batch {
			if _, err := m.Embed(context.Background(), texts[i:min(i+batch, len(texts))]); err != nil {
				b.Fatal(err)
			}
		}
	}
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N*len(texts))/secs, "sentences/s")
	b.ReportMetric(float64(b.N*tokens)/secs, "tokens/s")
	if cpu := cpuSeconds() - cpu0; cpu0 >= 0 && cpu > 0 {
		b.ReportMetric(float64(b.N*len(texts))/cpu, "sentences/cpu-s")
	}
	b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "procs")
}

// BenchmarkEmbedQuery measures the latency of one short search query.
func BenchmarkEmbedQuery(b *testing.B) {
	m := testModel(b)
	q := []string{"how did we fix the flaky login test"}
	for b.Loop() {
		if _, err := m.Embed(context.Background(), q); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoad(b *testing.B) {
	dir := modelDir(b)
	for b.Loop() {
		if _, err := Load(dir); err != nil {
			b.Fatal(err)
		}
	}
}
