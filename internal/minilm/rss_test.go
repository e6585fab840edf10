package minilm

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// rssBudget is the most memory a process holding the model may use while
// embedding: the float32 weights are about 91 MB.
const rssBudget = 150 << 20

// TestPeakRSS loads the model and embeds in a fresh process (this test
// binary re-run), then checks that process's peak resident set size.
func TestPeakRSS(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/status")
	}
	if raceEnabled {
		t.Skip("the race detector's shadow memory inflates RSS")
	}
	if os.Getenv("MINILM_RSS_CHILD") == "1" {
		rssChild(t)
		return
	}
	dir := modelDir(t)
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestPeakRSS$", "-test.v")
	cmd.Env = append(os.Environ(), "MINILM_RSS_CHILD=1", "HIVEMEM_MODEL_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var hwm int64 = -1
	for line := range strings.SplitSeq(string(out), "\n") {
		if _, v, ok := strings.Cut(line, "PEAK_RSS_BYTES="); ok {
			hwm, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	if hwm <= 0 {
		t.Fatalf("child printed no peak RSS:\n%s", out)
	}
	t.Logf("peak RSS with the model loaded and embedding: %.1f MiB", float64(hwm)/(1<<20))
	if hwm > rssBudget {
		t.Errorf("peak RSS %d bytes exceeds the %d-byte budget", hwm, rssBudget)
	}
}

func rssChild(t *testing.T) {
	m, err := Load(os.Getenv("HIVEMEM_MODEL_DIR"))
	if err != nil {
		t.Fatal(err)
	}
	// Enough text for two full-size forward passes (maxBatchTokens each),
	// so the activation buffers reach their largest size and get reused.
	texts := benchSentences(t, 40)
	texts = append(texts, strings.Repeat("a long document that fills the whole window ", 80))
	for range 2 {
		if _, err := m.Embed(context.Background(), texts); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("PEAK_RSS_BYTES=%d", kb*1024)
			return
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
}
