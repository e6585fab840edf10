package web

import (
	"html/template"
	"strings"
)

// A memory file's marker headings start with an emoji ("## 📌 Durable
// facts", "## 🗜 Condensed history"). The file keeps them verbatim; the
// dashboard draws the emoji as an inline icon instead, so the headings read
// right on a machine without an emoji font (where the emoji is an empty
// box).

// headingIcons are the emoji a heading may start with, and their icons.
var headingIcons = []struct{ emoji, icon string }{
	{"📌", "pin"},
	{"🗜", "clamp"},
}

// splitIcon returns the icon of the emoji heading starts with ("" for
// none) and the heading without it (nor a variation selector or the
// space after it).
func splitIcon(heading string) (icon, rest string) {
	for _, h := range headingIcons {
		if r, ok := strings.CutPrefix(heading, h.emoji); ok {
			r = strings.TrimPrefix(r, "\uFE0F")
			if t := strings.TrimLeft(r, " "); t != "" {
				return h.icon, t
			}
		}
	}
	return "", heading
}

// iconSVG is each icon, drawn in the text's colour; the words beside it
// say what it means, so it is hidden from screen readers.
var iconSVG = map[string]template.HTML{
	"pin":   `<svg class="icon icon-pin" viewBox="0 0 16 16" aria-hidden="true" focusable="false"><path d="M9.6 1.2l5.2 5.2-1.3.7-1.3-.4-2.4 2.4.5 3-1.1 1.1-2.6-2.6-4.4 4.4-.9-.1-.1-.9 4.4-4.4-2.6-2.6 1.1-1.1 3 .5 2.4-2.4-.4-1.3z"/></svg>`,
	"clamp": `<svg class="icon icon-clamp" viewBox="0 0 16 16" aria-hidden="true" focusable="false"><path d="M2 1.5h12V3H2zM2 13h12v1.5H2zM4.5 4.5h7L8 7.6zM4.5 11.5h7L8 8.4z"/></svg>`,
}

// icon is the template function: the icon's SVG, nothing for "".
func icon(name string) template.HTML { return iconSVG[name] }
