package web

import "testing"

func TestSafeNext(t *testing.T) {
	for in, want := range map[string]string{
		"/events": "/events", "": "/", "//evil.example": "/", `/\evil.example`: "/",
		"https://evil.example": "/", "/a\r\nSet-Cookie: x": "/", "/agents/x?view=raw": "/agents/x?view=raw",
		"/agents/x#top": "/agents/x#top", "/search?q=a%20b&next=//evil.example": "/search?q=a%20b&next=//evil.example",
		"/agents/x/archive/2026-11.md": "/agents/x/archive/2026-11.md",
		// Browsers drop TAB, CR and LF anywhere in a URL, and leading or
		// trailing C0 controls and spaces.
		"/\t/evil.example": "/", "/\n/evil.example": "/", "/\r/evil.example": "/", "\t//evil.example": "/",
		" //evil.example": "/", "/ /evil.example": "/", "/\x00/evil.example": "/", "/\x7f": "/", "/\u0085/x": "/",
		"/\u00a0/x": "/", "/\u2028/x": "/",
		// ... and read "\" as "/".
		`\\evil.example`: "/", `/\/evil.example`: "/", `\/evil.example`: "/",
		// Encoded, the same characters are refused in the path.
		"/%09/evil.example": "/", "/%0a/evil.example": "/", "/%5C/evil.example": "/", "/%00": "/",
		// Scheme, host, user, and paths that are not a single "/".
		"https:evil.example": "/", "https:/evil.example": "/", "javascript:alert(1)": "/", "//user@evil.example": "/",
		"///evil.example": "/", "////evil.example": "/", "/.//evil.example": "/", "/..//evil.example": "/",
		"/agents//x": "/", "evil.example": "/", "agents/x": "/", "?next=/": "/", "#/x": "/",
		// Malformed or not UTF-8.
		"/%zz": "/", "/\xff": "/",
	} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}
