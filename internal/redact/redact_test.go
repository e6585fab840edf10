package redact_test

import (
	"strings"
	"testing"

	"github.com/hivemem/hivemem/internal/redact"
	"github.com/hivemem/hivemem/internal/redact/redacttest"
)

// TestRedactReplacesEachKindByItsMarker: every generated kind, in every
// context it comes in, leaves no trace of its value and a marker in its
// place, and the text around it as written.
func TestRedactReplacesEachKindByItsMarker(t *testing.T) {
	g := redacttest.New(1)
	for _, kind := range redacttest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			for range 40 {
				s := g.Secret(kind)
				out, counts := redact.Default.Redact(s.Text)
				for _, n := range s.Needles() {
					if strings.Contains(out, n) {
						t.Fatalf("%s in %s: value kept:\n%s", kind, s.Context, out)
					}
				}
				if counts.Total() == 0 || !strings.Contains(out, "[redacted: ") {
					t.Fatalf("%s: no marker, counts %v:\n%s", kind, counts, out)
				}
				// The text around the secret is kept: undoing the markers
				// leaves the words around them.
				first, _, found := strings.Cut(s.Text, s.Value)
				if found && !strings.HasPrefix(out, first[:len(first)/2]) {
					t.Fatalf("%s: text before the secret changed:\n%s\n=>\n%s", kind, s.Text, out)
				}
			}
		})
	}
}

// TestRedactKeepsWhatEngineersPaste: the lookalikes named by the issue
// (and more) come back byte for byte.
func TestRedactKeepsWhatEngineersPaste(t *testing.T) {
	g := redacttest.New(2)
	for _, kind := range redacttest.LookalikeKinds() {
		for range 40 {
			l := g.Lookalike(kind)
			if out, c := redact.Default.Redact(l.Text); out != l.Text || c != nil {
				t.Errorf("%s changed: %q => %q (%v)", kind, l.Text, out, c)
			}
		}
	}
	for _, text := range []string{
		"commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed it",
		"id 123e4567-e89b-12d3-a456-426614174000",
		"sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
		`"integrity": "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg=="`,
		"arn:aws:iam::123456789012:user/Development/product_1234/*",
		"color: #ff8800; background: #fff",
		"upgrade to v1.26.8, then 2.0.0-rc.1",
		"API_KEY=${API_KEY}",
		"password: <your-password>",
		"token = os.environ['GITHUB_TOKEN']",
		"DATABASE_URL=postgres://app@localhost:5432/orders",
		"the primary key is (tenant_id, order_id)",
		"max_tokens=4096 and tokenizer=bert-base-uncased",
		"apiKey: config.apiKey",
		"SECRET_NAME=orders-db-prod-2",
		"Having good support is key. Appreciate you being there for me.",
		"the key is Wonderful, the token was Everything",
		"I'd like the Turkey Sandwiches. Password Strength. The Keywords Reference2 list",
	} {
		if out, c := redact.Default.Redact(text); out != text {
			t.Errorf("changed: %q => %q (%v)", text, out, c)
		}
	}
}

// TestRedactTwiceChangesNothing: a redacted text holds markers, which are
// not secrets.
func TestRedactTwiceChangesNothing(t *testing.T) {
	g := redacttest.New(3)
	for _, s := range g.Secrets(200) {
		once, _ := redact.Default.Redact(s.Text)
		if twice, c := redact.Default.Redact(once); twice != once || c != nil {
			t.Fatalf("second redaction changed %q into %q (%v)", once, twice, c)
		}
	}
}

// TestFindNamesLineAndKindNeverTheValue: a finding carries the line it
// starts on, the kind and a hash, and its JSON no value.
func TestFindNamesLineAndKindNeverTheValue(t *testing.T) {
	text := "line one\nexport GITHUB_TOKEN=ghp_" + strings.Repeat("a1B2", 9) + "\nthree\nfour AKIA" + strings.Repeat("Q", 16) + " end\n"
	fs := redact.Default.Find(text)
	want := []struct {
		kind string
		line int
	}{{"github-token", 2}, {"aws-access-key", 4}}
	if len(fs) != len(want) {
		t.Fatalf("found %+v, want %v", fs, want)
	}
	for i, w := range want {
		if fs[i].Kind != w.kind || fs[i].Line != w.line || len(fs[i].Hash) != 64 {
			t.Errorf("finding %d = %+v, want %s on line %d with a hash", i, fs[i], w.kind, w.line)
		}
		if strings.Contains(fs[i].Hash, "ghp_") {
			t.Errorf("hash holds the value")
		}
	}
}

// TestOptionsAllowAndExtraRules: an allowed value or pattern is kept;
// an extra rule redacts under its own kind; a bad rule is an error.
func TestOptionsAllowAndExtraRules(t *testing.T) {
	fake := "sk_test_" + strings.Repeat("Fixture0", 3)
	other := "sk_test_" + strings.Repeat("Other123", 3)
	r, err := redact.New(redact.Options{
		Allow:         []string{fake},
		AllowPatterns: []string{`^ghp_0{36}$`},
		Rules:         []string{`acme-token=acme_([A-Za-z0-9]{16})`},
	})
	if err != nil {
		t.Fatal(err)
	}
	text := "keys: " + fake + " " + other + " ghp_" + strings.Repeat("0", 36) + " acme_ABCDEFGH12345678"
	out, c := r.Redact(text)
	want := "keys: " + fake + " [redacted: stripe-key] ghp_" + strings.Repeat("0", 36) + " acme_[redacted: acme-token]"
	if out != want {
		t.Errorf("got  %q\nwant %q", out, want)
	}
	if c["stripe-key"] != 1 || c["acme-token"] != 1 || c.Total() != 2 {
		t.Errorf("counts %v", c)
	}
	for _, bad := range []redact.Options{{Rules: []string{"no-equals"}}, {Rules: []string{"Bad Kind=x"}}, {Rules: []string{"k=("}}, {AllowPatterns: []string{"("}}} {
		if _, err := redact.New(bad); err == nil {
			t.Errorf("New(%+v) accepted", bad)
		}
	}
}

// TestCountsString: kinds sorted, "none" for nothing.
func TestCountsString(t *testing.T) {
	for _, tc := range []struct {
		c    redact.Counts
		want string
	}{{nil, "none"}, {redact.Counts{"jwt": 1, "aws-access-key": 2}, "2 aws-access-key, 1 jwt"}} {
		if got := tc.c.String(); got != tc.want {
			t.Errorf("%v.String() = %q, want %q", tc.c, got, tc.want)
		}
	}
}

// TestRedactFormatsBeyondTheCorpus: formats the generator does not make
// (older or rarer ones) are caught too, and a publishable key is kept.
func TestRedactFormatsBeyondTheCorpus(t *testing.T) {
	for _, tc := range []struct{ text, kind string }{
		{"use sk-" + strings.Repeat("aB3dE5", 8) + " for the batch job", "openai-api-key"},
		{"socket mode: xapp-1-A0123ABCDEF-1234567890123-" + strings.Repeat("0a1b2c3d", 8), "slack-token"},
		{`"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----\n"`, "private-key"},
		{"redis://:Zq81mPz0KxT4@cache.internal:6379/0", "url-password"},
		{"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=JPNXKbOONNVtdNEVaXGPVqUZfrXB0ogSPeTqgja5JwAVYbnzv6k15LO+YB26ZO5YxKoeahU4CZ6U99moe4epqi1x;EndpointSuffix=core.windows.net", "secret-assignment"},
		{"Authorization: Basic " + "YWxhZGRpbjpvcGVuc2VzYW1lMTIz", "bearer-token"},
	} {
		fs := redact.Default.Find(tc.text)
		if len(fs) != 1 || fs[0].Kind != tc.kind {
			t.Errorf("%q: found %+v, want one %s", tc.text, fs, tc.kind)
		}
	}
	pk := "pk_live_" + strings.Repeat("Ab12", 6)
	if out, _ := redact.Default.Redact("publishable " + pk); !strings.Contains(out, pk) {
		t.Errorf("a publishable key was redacted: %s", out)
	}
}

// TestAssignmentsToNonSecretNamesAreKept: a public key, and the id, name,
// path or size of a key, are kept even when they look random.
func TestAssignmentsToNonSecretNamesAreKept(t *testing.T) {
	for _, text := range []string{
		"public_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGx3Yk9pZ0Jq4mQ2cWx0Y2d1cnR5 ops@example",
		"KMS_KEY_ID=5f3c2a9e-1b7d-4c8e-9a0f-2d6b8e4c1a3f",
		`"secretName": "orders-Db7-prod", "apiKeyId": "k7Fq2ZpW9xLm"`,
		"PRIVATE_KEY_PATH=keys/deploy_ed25519",
		"max_tokens: 4096Z1x",
	} {
		if out, c := redact.Default.Redact(text); out != text {
			t.Errorf("changed %q => %q (%v)", text, out, c)
		}
	}
	// The secret itself next to them is still redacted.
	if _, c := redact.Default.Redact("api_key_id=k7Fq2ZpW9xLm api_key=Zq81mPz0KxT4vB7n"); c.Total() != 1 {
		t.Errorf("counts %v, want the one key", c)
	}
}

// TestRedactAWSDocumentationKeys: AWS's documented example keys, the
// ones most often pasted as a key in a test or a how-to, are redacted
// like any other key of that format (they were kept as lookalikes before).
func TestRedactAWSDocumentationKeys(t *testing.T) {
	for _, text := range []string{
		"AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
		"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	} {
		out, c := redact.Default.Redact(text)
		if strings.Contains(out, "EXAMPLE") || c.Total() != 1 {
			t.Errorf("%q => %q (%v)", text, out, c)
		}
	}
}

// TestRedactNamesWrittenTogether: a secret assigned to a name that runs
// its words together (apikey=, AUTHTOKEN:) is redacted, as one whose
// words are separated is.
func TestRedactNamesWrittenTogether(t *testing.T) {
	for _, text := range []string{
		"curl 'https://api.example.com/v1?apikey=Zx81Kq2LmN0pQr7sTu4v'",
		"AUTHTOKEN: Zx81Kq2LmN0pQr7sTu4vW9y",
		"dbpassword=hunter2Hunter2x",
		"the deploy key is Zx81Kq2LmN0pQr7sTu4v",
	} {
		if out, c := redact.Default.Redact(text); c.Total() != 1 || strings.Contains(out, "Zx81") || strings.Contains(out, "hunter2") {
			t.Errorf("%q => %q (%v)", text, out, c)
		}
	}
}
