// Package redacttest generates what the redaction tests feed hivemem:
// secrets of many kinds, made from the providers' documented formats
// (prefix, length, alphabet), and the lookalikes engineers paste all day
// (commit SHAs, UUIDs, digests, integrity hashes, example ARNs, colours,
// versions, ...), set in prose, JSON, YAML, URLs and shell lines. It is
// written independently of internal/redact's rules: a rule tuned to this
// generator would only be tested against itself, so the generator follows
// the formats as the providers document them, not as the detector reads
// them.
package redacttest

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"strings"
)

// Secret is one generated secret.
type Secret struct {
	Kind string // the generator's name for its format, e.g. "aws-access-key"
	// Value is what must never reach the home. Parts are further strings
	// that must not either (the lines of a PEM body).
	Value string
	Parts []string
	// Text is Value set in context (a shell line, a JSON object, ...), and
	// Context names that context.
	Text    string
	Context string
}

// Needles are the strings of s that must not survive anywhere: its value,
// or, for a multi-line value, each of its parts.
func (s Secret) Needles() []string {
	if len(s.Parts) > 0 {
		return s.Parts
	}
	return []string{s.Value}
}

// Lookalike is a string that looks random but is no secret: it must be
// kept byte for byte.
type Lookalike struct {
	Kind  string
	Value string
	Text  string
}

// Gen generates secrets and lookalikes from a seeded source, so that a
// failing case can be reproduced.
type Gen struct{ r *mrand.Rand }

// New returns a generator seeded with seed.
func New(seed uint64) *Gen { return &Gen{r: mrand.New(mrand.NewPCG(seed, seed^0x9e3779b97f4a7c15))} }

const (
	upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lower  = "abcdefghijklmnopqrstuvwxyz"
	digits = "0123456789"
	hexLow = "0123456789abcdef"
	base62 = upper + lower + digits
	b64url = base62 + "-_"
	b64std = base62 + "+/"
	base32 = upper + "234567"
)

// str is n characters drawn from alphabet.
func (g *Gen) str(alphabet string, n int) string {
	var b strings.Builder
	for range n {
		b.WriteByte(alphabet[g.r.IntN(len(alphabet))])
	}
	return b.String()
}

// mixed is n characters of alphabet holding at least one upper-case
// letter, one lower-case letter and one digit where the alphabet has them
// (as a real random token of that length almost surely does).
func (g *Gen) mixed(alphabet string, n int) string {
	for {
		s := g.str(alphabet, n)
		if !strings.ContainsAny(alphabet, upper) || strings.ContainsAny(s, upper) &&
			(!strings.ContainsAny(alphabet, lower) || strings.ContainsAny(s, lower)) &&
			(!strings.ContainsAny(alphabet, digits) || strings.ContainsAny(s, digits)) {
			return s
		}
	}
}

func (g *Gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g *Gen) bytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.r.UintN(256))
	}
	return b
}

func b64u(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// kind makes one secret's value (and label: the name it is usually
// stored under) from the provider's documented format.
type kind struct {
	name  string
	label string // an environment variable it lives in
	// prefixed: the value names its provider by itself (a prose mention
	// without a label is realistic).
	prefixed bool
	make     func(g *Gen) (value string, parts []string)
}

// kinds are the secret formats generated, each from its provider's
// documentation of the token's shape.
var kinds = []kind{
	// AWS: access key ids are 20 characters, AKIA (long-term) or ASIA
	// (temporary) then 16 of A-Z and 2-7; secret keys are 40 characters of
	// base64's alphabet.
	{"aws-access-key", "AWS_ACCESS_KEY_ID", true, func(g *Gen) (string, []string) {
		return g.pick("AKIA", "ASIA") + g.str(base32, 16), nil
	}},
	{"aws-secret-key", "AWS_SECRET_ACCESS_KEY", false, func(g *Gen) (string, []string) { return g.mixed(b64std, 40), nil }},
	// GitHub: classic tokens ghp_ + 36 base62; OAuth gho_, app ghs_;
	// fine-grained github_pat_ + 22 base62 + _ + 59 base62.
	{"github-pat", "GITHUB_TOKEN", true, func(g *Gen) (string, []string) {
		return g.pick("ghp_", "gho_", "ghs_") + g.mixed(base62, 36), nil
	}},
	{"github-fine-grained-pat", "GH_TOKEN", true, func(g *Gen) (string, []string) {
		return "github_pat_" + g.mixed(base62, 22) + "_" + g.mixed(base62, 59), nil
	}},
	// Slack: bot xoxb-, user xoxp- tokens of dash-separated numeric ids
	// and a random tail; incoming webhooks under hooks.slack.com/services.
	{"slack-bot-token", "SLACK_BOT_TOKEN", true, func(g *Gen) (string, []string) {
		return fmt.Sprintf("xoxb-%s-%s-%s", g.str(digits, 11), g.str(digits, 13), g.mixed(base62, 24)), nil
	}},
	{"slack-user-token", "SLACK_USER_TOKEN", true, func(g *Gen) (string, []string) {
		return fmt.Sprintf("xoxp-%s-%s-%s-%s", g.str(digits, 11), g.str(digits, 12), g.str(digits, 13), g.str(hexLow, 32)), nil
	}},
	{"slack-webhook", "SLACK_WEBHOOK_URL", true, func(g *Gen) (string, []string) {
		return fmt.Sprintf("https://hooks.slack.com/services/T%s/B%s/%s", g.str(upper+digits, 8), g.str(upper+digits, 10), g.mixed(base62, 24)), nil
	}},
	// OpenAI: project keys sk-proj-…, legacy sk-…, both carrying the
	// base64 of "openai" (T3BlbkFJ) in the middle.
	{"openai-api-key", "OPENAI_API_KEY", true, func(g *Gen) (string, []string) {
		if g.r.IntN(2) == 0 {
			return "sk-" + g.mixed(base62, 20) + "T3BlbkFJ" + g.mixed(base62, 20), nil
		}
		return "sk-proj-" + g.mixed(b64url, 74) + "T3BlbkFJ" + g.mixed(b64url, 74), nil
	}},
	// Anthropic: sk-ant-api03- + 93 base64url + AA.
	{"anthropic-api-key", "ANTHROPIC_API_KEY", true, func(g *Gen) (string, []string) {
		return "sk-ant-api03-" + g.mixed(b64url, 93) + "AA", nil
	}},
	// Stripe: secret keys sk_live_/sk_test_, restricted rk_live_, then
	// 24 or 99 base62.
	{"stripe-key", "STRIPE_SECRET_KEY", true, func(g *Gen) (string, []string) {
		return g.pick("sk_live_", "sk_test_", "rk_live_") + g.mixed(base62, g.pickInt(24, 99)), nil
	}},
	// Stripe (and Svix) webhook signing secrets: whsec_ + base64.
	{"webhook-signing-secret", "STRIPE_WEBHOOK_SECRET", true, func(g *Gen) (string, []string) {
		return "whsec_" + g.pick(g.mixed(base62, 32), base64.StdEncoding.EncodeToString(g.bytes(24))), nil
	}},
	// Google API keys: AIza + 35 base64url.
	{"google-api-key", "GOOGLE_API_KEY", true, func(g *Gen) (string, []string) {
		return "AIza" + g.mixed(b64url, 35), nil
	}},
	// npm automation / publish tokens: npm_ + 36 base62.
	{"npm-token", "NPM_TOKEN", true, func(g *Gen) (string, []string) { return "npm_" + g.mixed(base62, 36), nil }},
	// GitLab personal access tokens: glpat- + 20 base64url.
	{"gitlab-token", "GITLAB_TOKEN", true, func(g *Gen) (string, []string) { return "glpat-" + g.mixed(b64url, 20), nil }},
	// SendGrid: SG. + 22 + . + 43 base64url.
	{"sendgrid-api-key", "SENDGRID_API_KEY", true, func(g *Gen) (string, []string) {
		return "SG." + g.mixed(b64url, 22) + "." + g.mixed(b64url, 43), nil
	}},
	// Twilio: API key sids SK + 32 hex; auth tokens 32 hex under a label.
	{"twilio-api-key", "TWILIO_API_KEY", true, func(g *Gen) (string, []string) { return "SK" + g.str(hexLow, 32), nil }},
	{"twilio-auth-token", "TWILIO_AUTH_TOKEN", false, func(g *Gen) (string, []string) { return g.str(hexLow, 32), nil }},
	// Hugging Face user access tokens: hf_ + 34 letters.
	{"huggingface-token", "HF_TOKEN", true, func(g *Gen) (string, []string) { return "hf_" + g.mixed(upper+lower, 34), nil }},
	// DigitalOcean personal access tokens: dop_v1_ + 64 hex.
	{"digitalocean-token", "DIGITALOCEAN_TOKEN", true, func(g *Gen) (string, []string) { return "dop_v1_" + g.str(hexLow, 64), nil }},
	// Shopify admin API access tokens: shpat_ + 32 hex.
	{"shopify-token", "SHOPIFY_ACCESS_TOKEN", true, func(g *Gen) (string, []string) { return "shpat_" + g.str(hexLow, 32), nil }},
	// A JWT: base64url header.payload.signature (HS256: 32-byte MAC).
	{"jwt", "AUTH_TOKEN", true, func(g *Gen) (string, []string) {
		h := b64u(`{"alg":"HS256","typ":"JWT"}`)
		p, _ := json.Marshal(map[string]any{"sub": g.str(digits, 10), "name": g.pick("Ada", "Lin", "Sam"), "iat": 1700000000 + g.r.IntN(1e8)})
		return h + "." + b64u(string(p)) + "." + base64.RawURLEncoding.EncodeToString(g.bytes(32)), nil
	}},
	// A PEM private key: the base64 body wrapped at 64 columns.
	{"private-key", "", true, func(g *Gen) (string, []string) {
		typ := g.pick("RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY")
		body := base64.StdEncoding.EncodeToString(g.bytes(300 + g.r.IntN(900)))
		var lines []string
		for len(body) > 64 {
			lines = append(lines, body[:64])
			body = body[64:]
		}
		lines = append(lines, body)
		var parts []string
		for _, l := range lines {
			if len(l) >= 16 { // a short last line could be anything
				parts = append(parts, l)
			}
		}
		return "-----BEGIN " + typ + "-----\n" + strings.Join(lines, "\n") + "\n-----END " + typ + "-----", parts
	}},
	// Database URLs with a password.
	{"postgres-url-password", "DATABASE_URL", true, func(g *Gen) (string, []string) {
		return g.mixed(base62, 10+g.r.IntN(14)), nil
	}},
	{"mysql-url-password", "MYSQL_URL", true, func(g *Gen) (string, []string) { return g.mixed(base62, 12+g.r.IntN(12)), nil }},
	// A key of one's own service in an environment assignment.
	{"generic-assignment", "", false, func(g *Gen) (string, []string) {
		return g.pick(g.mixed(base62, 24+g.r.IntN(17)), g.str(hexLow, 32), g.mixed(b64url, 32)), nil
	}},
}

func (g *Gen) pickInt(xs ...int) int { return xs[g.r.IntN(len(xs))] }

// Kinds lists the secret kinds generated.
func Kinds() []string {
	var out []string
	for _, k := range kinds {
		out = append(out, k.name)
	}
	return out
}

var genericLabels = []string{"INTERNAL_API_KEY", "PAYMENTS_SECRET", "SERVICE_TOKEN", "DB_PASSWORD", "CLIENT_SECRET", "ADMIN_PASSWORD", "SIGNING_KEY", "api_key", "secret_token"}

// Secret makes a secret of the kind named, set in one of its contexts.
func (g *Gen) Secret(name string) Secret {
	for _, k := range kinds {
		if k.name == name {
			return g.secret(k)
		}
	}
	panic("redacttest: no kind " + name)
}

// Secrets makes n secrets cycling through every kind, each set in a
// context chosen at random among those that fit it.
func (g *Gen) Secrets(n int) []Secret {
	out := make([]Secret, 0, n)
	for i := range n {
		out = append(out, g.secret(kinds[i%len(kinds)]))
	}
	return out
}

func (g *Gen) secret(k kind) Secret {
	v, parts := k.make(g)
	s := Secret{Kind: k.name, Value: v, Parts: parts}
	label := k.label
	if label == "" {
		label = g.pick(genericLabels...)
	}
	lowerLabel := strings.ToLower(label)
	switch k.name {
	case "private-key":
		s.Context = g.pick("prose", "yaml", "shell")
		switch s.Context {
		case "prose":
			s.Text = "Here is the deploy key from the vault, paste it into ~/.ssh/id_deploy:\n\n" + v + "\n\nthen chmod 600 it."
		case "yaml":
			s.Text = "tls:\n  key: |\n    " + strings.ReplaceAll(v, "\n", "\n    ") + "\n  cert: /etc/tls/cert.pem"
		default:
			s.Text = "cat > key.pem <<'EOF'\n" + v + "\nEOF"
		}
		return s
	case "postgres-url-password", "mysql-url-password":
		scheme, port := "postgres", 5432
		if k.name == "mysql-url-password" {
			scheme, port = g.pick("mysql", "mysql2"), 3306
		} else {
			scheme = g.pick("postgres", "postgresql")
		}
		u := fmt.Sprintf("%s://%s:%s@%s:%d/%s", scheme, g.pick("app", "admin", "svc_orders", "root"), v,
			g.pick("db.internal", "10.0.3.12", "prod-db.cluster-ro.eu-west-1.rds.amazonaws.com", "localhost"), port, g.pick("orders", "app_prod", "analytics"))
		s.Context = g.pick("shell", "json", "yaml", "prose", "url")
		switch s.Context {
		case "shell":
			s.Text = fmt.Sprintf("export %s=%s", label, u)
		case "json":
			s.Text = fmt.Sprintf(`{"database": {"url": %q, "pool": 10}}`, u)
		case "yaml":
			s.Text = fmt.Sprintf("database:\n  url: %s\n  pool: 10", u)
		case "url":
			s.Text = fmt.Sprintf("psql %s -c 'select count(*) from orders'", u)
		default:
			s.Text = fmt.Sprintf("The staging database is at %s, it is reset every night.", u)
		}
		return s
	}
	ctxs := []string{"shell", "json", "yaml", "labelled-prose", "dotenv"}
	if k.prefixed {
		ctxs = append(ctxs, "prose", "url", "header")
	}
	s.Context = g.pick(ctxs...)
	switch s.Context {
	case "shell":
		s.Text = fmt.Sprintf("export %s=%s", label, g.quote(v))
	case "dotenv":
		s.Text = fmt.Sprintf("NODE_ENV=production\n%s=%s\nPORT=8080", label, v)
	case "json":
		s.Text = fmt.Sprintf(`{"%s": %q, "region": "eu-west-1"}`, g.camel(lowerLabel), v)
	case "yaml":
		s.Text = fmt.Sprintf("env:\n  - name: %s\n    value: %s\n  %s: %s", label, g.quote(v), lowerLabel, v)
	case "labelled-prose":
		s.Text = fmt.Sprintf("I set %s to %s and restarted the worker; it picked it up.", label, v)
	case "prose":
		s.Text = fmt.Sprintf("Use %s for the staging deploy, it expires on Friday.", v)
	case "url":
		if strings.HasPrefix(v, "https://") {
			s.Text = fmt.Sprintf("curl -X POST -d '{\"text\":\"deploy done\"}' %s", v)
		} else {
			s.Text = fmt.Sprintf("GET https://api.example.com/v2/items?limit=20&access_token=%s", v)
		}
	case "header":
		s.Text = fmt.Sprintf(`curl -H "Authorization: Bearer %s" https://api.example.com/v1/me`, v)
	}
	return s
}

// quote is v, sometimes in quotes as people write it.
func (g *Gen) quote(v string) string {
	switch g.r.IntN(3) {
	case 0:
		return `"` + v + `"`
	case 1:
		return "'" + v + "'"
	}
	return v
}

// camel is an env label as a JSON key, in one of the spellings seen.
func (g *Gen) camel(label string) string {
	if g.r.IntN(2) == 0 {
		return label
	}
	parts := strings.Split(label, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// lookalike kinds: what engineers paste all day that looks random.
var lookalikes = []struct {
	name string
	make func(g *Gen) (value, text string)
}{
	{"commit-sha", func(g *Gen) (string, string) {
		v := g.str(hexLow, 40)
		return v, fmt.Sprintf("The fix landed in commit %s on main.", v)
	}},
	{"short-sha", func(g *Gen) (string, string) {
		v := g.str(hexLow, 7)
		return v, fmt.Sprintf("git revert %s", v)
	}},
	{"uuid", func(g *Gen) (string, string) {
		b := g.bytes(16)
		b[6] = b[6]&0x0f | 0x40
		b[8] = b[8]&0x3f | 0x80
		h := hex.EncodeToString(b)
		v := h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
		return v, fmt.Sprintf(`{"request_id": "%s", "status": 502}`, v)
	}},
	{"sha256-digest", func(g *Gen) (string, string) {
		v := g.str(hexLow, 64)
		return v, fmt.Sprintf("%s  dist/hivemem-linux-amd64.tar.gz", v)
	}},
	{"image-digest", func(g *Gen) (string, string) {
		v := "sha256:" + g.str(hexLow, 64)
		return v, fmt.Sprintf("image: ghcr.io/acme/api@%s", v)
	}},
	{"npm-integrity", func(g *Gen) (string, string) {
		v := "sha512-" + base64.StdEncoding.EncodeToString(g.bytes(64))
		return v, fmt.Sprintf(`"integrity": "%s",`, v)
	}},
	{"example-arn", func(g *Gen) (string, string) {
		v := fmt.Sprintf("arn:aws:iam::%s:role/%s", g.pick("123456789012", "111122223333", "444455556666"), g.pick("DeployRole", "lambda-exec", "ReadOnly"))
		return v, fmt.Sprintf("Assume %s before running terraform.", v)
	}},
	{"hex-colour", func(g *Gen) (string, string) {
		v := "#" + g.str(hexLow, g.pickInt(3, 6))
		return v, fmt.Sprintf("  --accent: %s;", v)
	}},
	{"semver", func(g *Gen) (string, string) {
		v := fmt.Sprintf("v%d.%d.%d%s", g.r.IntN(5), g.r.IntN(40), g.r.IntN(20), g.pick("", "-rc.1", "-beta.2", "+build.7"))
		return v, fmt.Sprintf("Bumped the SDK to %s in go.mod.", v)
	}},
	{"go-pseudo-version", func(g *Gen) (string, string) {
		v := fmt.Sprintf("v0.0.0-2024%02d%02d%06d-%s", 1+g.r.IntN(12), 1+g.r.IntN(28), g.r.IntN(240000), g.str(hexLow, 12))
		return v, fmt.Sprintf("require golang.org/x/exp %s", v)
	}},
	{"go-sum-hash", func(g *Gen) (string, string) {
		v := "h1:" + base64.StdEncoding.EncodeToString(g.bytes(32))
		return v, fmt.Sprintf("github.com/acme/lib v1.4.2 %s", v)
	}},
	{"placeholder-assignment", func(g *Gen) (string, string) {
		v := g.pick("${API_KEY}", "<your-api-key>", "changeme", "$(cat /run/secrets/token)", "xxxxxxxxxxxxxxxx", "REPLACE_ME", "os.environ['TOKEN']", "{{ .Values.apiKey }}")
		return v, fmt.Sprintf("API_KEY=%s", v)
	}},
	{"url-without-password", func(g *Gen) (string, string) {
		v := g.pick("postgres://app@localhost:5432/orders", "https://user@github.com/acme/api.git", "mysql://localhost:3306/test", "postgres://db.internal/app_prod?sslmode=require")
		return v, fmt.Sprintf("connect with %s", v)
	}},
	{"k8s-pod-name", func(g *Gen) (string, string) {
		v := fmt.Sprintf("%s-%s-%s", g.pick("api", "worker", "nginx"), g.str(hexLow[:10]+"bcdfghjklmnpqrstvwxz", 10), g.str("bcdfghjklmnpqrstvwxz2456789", 5))
		return v, fmt.Sprintf("kubectl logs %s -c app", v)
	}},
	{"file-path", func(g *Gen) (string, string) {
		v := g.pick("/usr/local/lib/node_modules/typescript/lib/tsserver.js", "internal/store/postgres/migrations/0007_add_origin.sql", "~/.cache/hivemem/models/minilm")
		return v, fmt.Sprintf("see %s:128", v)
	}},
	{"long-identifier", func(g *Gen) (string, string) {
		v := g.pick("getOrganizationBillingAccountSettingsV2", "TestRememberRefusesSecretsInHeadingsAcrossAgents", "AbstractSingletonProxyFactoryBean")
		return v, fmt.Sprintf("the failing one is %s", v)
	}},
	{"ipv6-and-mac", func(g *Gen) (string, string) {
		v := fmt.Sprintf("fe80::%s:%s:%s:%s", g.str(hexLow, 4), g.str(hexLow, 4), g.str(hexLow, 4), g.str(hexLow, 4))
		return v, fmt.Sprintf("the pod's link-local address is %s", v)
	}},
	{"base64-data", func(g *Gen) (string, string) {
		v := base64.StdEncoding.EncodeToString([]byte(g.pick("hello world, this is a test", "{\"kind\":\"ping\",\"seq\":12}", "the quick brown fox jumps")))
		return v, fmt.Sprintf("echo %s | base64 -d", v)
	}},
	{"timestamp-and-duration", func(g *Gen) (string, string) {
		v := fmt.Sprintf("2026-%02d-%02dT%02d:%02d:%02d.%03dZ", 1+g.r.IntN(12), 1+g.r.IntN(28), g.r.IntN(24), g.r.IntN(60), g.r.IntN(60), g.r.IntN(1000))
		return v, fmt.Sprintf("the build at %s took 4m32.118s", v)
	}},
	{"password-word-in-prose", func(g *Gen) (string, string) {
		v := g.pick("password_reset_requested", "tokenizer", "TokenBucketLimiter")
		return v, fmt.Sprintf("The secret is to call %s before the tokenizer runs.", v)
	}},
}

// LookalikeKinds lists the lookalike kinds generated.
func LookalikeKinds() []string {
	var out []string
	for _, l := range lookalikes {
		out = append(out, l.name)
	}
	return out
}

// Lookalikes makes n lookalikes cycling through every kind.
func (g *Gen) Lookalikes(n int) []Lookalike {
	out := make([]Lookalike, 0, n)
	for i := range n {
		l := lookalikes[i%len(lookalikes)]
		v, t := l.make(g)
		out = append(out, Lookalike{Kind: l.name, Value: v, Text: t})
	}
	return out
}

// Lookalike makes one lookalike of the kind named.
func (g *Gen) Lookalike(name string) Lookalike {
	for _, l := range lookalikes {
		if l.name == name {
			v, t := l.make(g)
			return Lookalike{Kind: l.name, Value: v, Text: t}
		}
	}
	panic("redacttest: no lookalike " + name)
}

// Seed is a random seed for a run; tests log it so that a failure can be
// replayed with New(seed).
func Seed() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	var s uint64
	for _, x := range b {
		s = s<<8 | uint64(x)
	}
	return s
}

// Transcript is a Claude Code session log (JSON lines, as
// ~/.claude/projects/<project>/<session>.jsonl holds) in which each
// secret and lookalike is said once, in user and assistant turns and
// Bash tool calls, among ordinary talk.
func (g *Gen) Transcript(secrets []Secret, looks []Lookalike) []byte {
	session := g.uuid()
	var b strings.Builder
	line := func(v map[string]any) {
		data, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	line(map[string]any{"type": "summary", "summary": "Wire the payments worker to staging", "leafUuid": "leaf"})
	n := 0
	ts := func() string {
		n++
		return fmt.Sprintf("2026-12-05T%02d:%02d:%02d.000Z", 9+n/60, n%60, n%60)
	}
	turn := func(typ string, content any) {
		id := g.uuid()
		line(map[string]any{"parentUuid": nil, "isSidechain": false, "userType": "external", "cwd": "/src/payments",
			"sessionId": session, "version": "2.0.14", "gitBranch": "main", "type": typ,
			"message": map[string]any{"role": typ, "content": content}, "uuid": id, "timestamp": ts()})
	}
	talk := []string{
		"Let me check the worker's configuration first.",
		"The tests pass locally; the failure is only on staging.",
		"I'll restart the service and watch the logs.",
	}
	li := 0
	for i, s := range secrets {
		switch i % 3 {
		case 0:
			turn("user", "Here is what I have in my notes for staging:\n"+s.Text)
		case 1:
			turn("assistant", []any{map[string]any{"type": "text", "text": talk[i%len(talk)] + " I found this in the config:\n" + s.Text}})
		default:
			cmd := s.Text
			if strings.Contains(cmd, "\n") {
				// A tool call is rendered on one line: keep it a user turn.
				turn("user", "And this one too:\n"+cmd)
				continue
			}
			turn("assistant", []any{map[string]any{"type": "tool_use", "id": "toolu_" + g.str(base62, 12), "name": "Bash",
				"input": map[string]any{"command": cmd, "description": "Try the credentials"}}})
		}
		if li < len(looks) {
			turn("assistant", []any{map[string]any{"type": "text", "text": "For the record: " + looks[li].Text}})
			li++
		}
	}
	for ; li < len(looks); li++ {
		turn("user", "Also note: "+looks[li].Text)
	}
	return []byte(b.String())
}

// Note is a remembered note's text holding the secrets and lookalikes,
// one item a line, as an agent writes down what it set up.
func Note(secrets []Secret, looks []Lookalike) string {
	var b strings.Builder
	b.WriteString("Staging setup, as of today.\n\n")
	for i, s := range secrets {
		b.WriteString(s.Text)
		b.WriteString("\n")
		if i < len(looks) {
			b.WriteString(looks[i].Text + "\n")
		}
	}
	for i := len(secrets); i < len(looks); i++ {
		b.WriteString(looks[i].Text + "\n")
	}
	return b.String()
}

func (g *Gen) uuid() string {
	h := hex.EncodeToString(g.bytes(16))
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
