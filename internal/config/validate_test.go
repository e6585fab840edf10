package config

// Every key with a value of the wrong type, out-of-range
// values, bad environment overrides; each must be an error that names the
// key (or its environment variable), and no secret may show in an error.

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/filetest"
)

type typedKey struct {
	section, key, env string
	typ               reflect.Type
}

// typedKeys lists every key of Config with its type.
func typedKeys() []typedKey {
	var out []typedKey
	ct := reflect.TypeOf(Config{})
	for i := range ct.NumField() {
		sec := ct.Field(i)
		for j := range sec.Type.NumField() {
			f := sec.Type.Field(j)
			s, k := sec.Tag.Get("toml"), f.Tag.Get("toml")
			out = append(out, typedKey{s, k, "HIVEMEM_" + strings.ToUpper(s) + "_" + strings.ToUpper(k), f.Type})
		}
	}
	return out
}

func loadFile(t *testing.T, file string) error {
	t.Helper()
	_, err := Load(filetest.Temp(t, "config.toml", file))
	return err
}

// TestWrongTOMLTypesNameTheKey: every key given a value of another type is an
// error naming section.key.
func TestWrongTOMLTypesNameTheKey(t *testing.T) {
	for _, k := range typedKeys() {
		var bad []string
		switch {
		case k.typ == reflect.TypeOf(Duration{}):
			bad = []string{`5`, `"soon"`, `true`, `"5"`, `"-"`}
		case k.typ.Kind() == reflect.String:
			bad = []string{`5`, `true`, `["a"]`, `{a = 1}`}
		case k.typ.Kind() == reflect.Bool:
			bad = []string{`"yes"`, `1`, `"true"`}
		case k.typ.Kind() == reflect.Float64:
			bad = []string{`"0.5"`, `true`}
		default: // integers
			bad = []string{`"5"`, `5.5`, `true`, `99999999999999999999`}
		}
		for _, v := range bad {
			file := fmt.Sprintf("[%s]\n%s = %s\n", k.section, k.key, v)
			err := loadFile(t, file)
			if err == nil || !strings.Contains(err.Error(), k.section+"."+k.key) {
				t.Errorf("%s.%s = %s: %v, want an error naming %s.%s", k.section, k.key, v, err, k.section, k.key)
			}
		}
	}
}

// TestBadEnvValuesNameTheVariable: every non-string key's environment override with
// a value that does not parse is an error naming the variable.
func TestBadEnvValuesNameTheVariable(t *testing.T) {
	for _, k := range typedKeys() {
		var bad []string
		switch {
		case k.typ == reflect.TypeOf(Duration{}):
			bad = []string{"5", "soon", " 5s", "5 s"}
		case k.typ.Kind() == reflect.String, k.typ == reflect.TypeOf([]string{}):
			continue // any text is a string, any blank-separated text a list
		case k.typ.Kind() == reflect.Bool:
			bad = []string{"yes", "on", "2"}
		case k.typ.Kind() == reflect.Float64:
			bad = []string{"half", "0,5"}
		default:
			bad = []string{"lots", "5.5", "1e3", "99999999999999999999", "0x"}
		}
		for _, v := range bad {
			t.Run(k.env+"="+v, func(t *testing.T) {
				t.Setenv(k.env, v)
				err := loadFile(t, "")
				if err == nil || !strings.Contains(err.Error(), k.env) {
					t.Errorf("%s=%q: %v, want an error naming %s", k.env, v, err, k.env)
				}
			})
		}
	}
}

// TestEnumKeysRefuseOtherValues: the keys with a fixed set of values refuse any
// other, from the file and from the environment, naming the key.
func TestEnumKeysRefuseOtherValues(t *testing.T) {
	for _, c := range []struct{ section, key, value string }{
		{"palace", "backend", "mysql"},
		{"palace", "backend", "SQLite"},
		{"palace", "vector_mode", "hnsw"},
		{"search", "fusion", "sum"},
		{"embedder", "provider", "ollama"},
	} {
		err := loadFile(t, fmt.Sprintf("[%s]\n%s = %q\n", c.section, c.key, c.value))
		if err == nil || !strings.Contains(err.Error(), c.section+"."+c.key) {
			t.Errorf("file %s.%s = %q: %v, want an error naming %s.%s", c.section, c.key, c.value, err, c.section, c.key)
		}
		t.Run("env", func(t *testing.T) {
			t.Setenv("HIVEMEM_"+strings.ToUpper(c.section+"_"+c.key), c.value)
			if err := loadFile(t, ""); err == nil || !strings.Contains(err.Error(), c.section+"."+c.key) {
				t.Errorf("env %s.%s = %q: %v, want an error naming %s.%s", c.section, c.key, c.value, err, c.section, c.key)
			}
		})
	}
}

// TestOutOfRangeValuesAreRefused: values of the right type that cannot work must be
// refused at load, naming the key, as budget_bytes, candidate_pool,
// query_cache, max_conns < 0, hnsw_ef_search and the others already are.
// Today these load without a word:
//   - search.vector_weight = nan or inf (TOML and ParseFloat both accept
//     them; palace.New replaces only weights <= 0, and NaN <= 0 is false,
//     so every fused score is NaN and the ranking is arbitrary); negative
//     weights are silently replaced by 0.5;
//   - search.rrf_k < 0, silently replaced by 60;
//   - search.results above palace.MaxResults (1000): every web search
//     without ?results= then fails with "results must be between 1 and
//     1000", which does not name the setting;
//   - palace.max_conns above 2^31-1: converted to int32 it wraps (2^32 is
//     0, and the pool refuses to open with "MaxSize must be >= 1"; 2^32+1
//     is a pool of one connection).
func TestOutOfRangeValuesAreRefused(t *testing.T) {
	for _, c := range []struct{ file, key string }{
		{"[search]\nvector_weight = nan\n", "search.vector_weight"},
		{"[search]\nvector_weight = inf\n", "search.vector_weight"},
		{"[search]\nvector_weight = -1.0\n", "search.vector_weight"},
		{"[search]\nrrf_k = -5\n", "search.rrf_k"},
		{"[search]\nresults = 5000\n", "search.results"},
		{"[palace]\nmax_conns = 4294967296\n", "palace.max_conns"},
		{"[palace]\nmax_conns = 4294967297\n", "palace.max_conns"},
	} {
		err := loadFile(t, c.file)
		if err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%q: %v, want an error naming %s", c.file, err, c.key)
		}
	}
	for _, v := range []string{"NaN", "nan", "+Inf", "-Inf"} {
		t.Run("env "+v, func(t *testing.T) {
			t.Setenv("HIVEMEM_SEARCH_VECTOR_WEIGHT", v)
			if err := loadFile(t, ""); err == nil {
				t.Errorf("HIVEMEM_SEARCH_VECTOR_WEIGHT=%s loads", v)
			}
		})
	}
}

// TestInRangeEdgesStillLoad: the edges that are fine stay fine.
func TestInRangeEdgesStillLoad(t *testing.T) {
	for _, file := range []string{
		"[search]\nvector_weight = 0.0\nrrf_k = 0\ncandidate_pool = 10000\nresults = 1\nwake_up_budget = 100000\nquery_cache = 0\n",
		"[palace]\nmax_conns = 0\nhnsw_ef_search = 1000\nstatement_timeout = \"-1s\"\n",
		"[reflector]\ninterval = \"0s\"\nbyte_trigger_pct = 100\nrecent_keep = 1\nretention = 1\n",
		"[manager]\nhttp = \"off\"\nscan_interval = \"0s\"\ndebounce = \"0s\"\n",
		"",
	} {
		if err := loadFile(t, file); err != nil {
			t.Errorf("%q: %v", file, err)
		}
	}
}

// TestSecretsNotInErrors: a malformed value of a secret key (a token
// or API key written without quotes, a DSN in the environment) does not
// show up in the error.
func TestSecretsNotInErrors(t *testing.T) {
	const secret = "s3cretTokenValue"
	for _, file := range []string{
		"[manager]\ntoken = " + secret + "\n",
		"[embedder]\napi_key = " + secret + "\n",
		"[summarizer]\napi_key = " + secret + "\n",
		"[palace]\ndsn = postgres://u:" + secret + "@h/db\n",
	} {
		err := loadFile(t, file)
		if err == nil {
			t.Errorf("%q loads", file)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q: the error shows the secret: %v", file, err)
		}
	}
	t.Setenv("HIVEMEM_DSN", "postgres://u:"+secret+"@h/db")
	t.Setenv("HIVEMEM_BACKEND", "mysql")
	if err := loadFile(t, ""); err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("bad backend with a DSN set: %v", err)
	}
}
