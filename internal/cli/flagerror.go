package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagError is every command's cobra FlagErrorFunc: it rewrites pflag's
// parse errors ("strconv.ParseInt: parsing ...", "unknown flag: --x")
// into ones that name the flag and what it wants, suggest the flag meant
// for a mistyped one, and end with the command's usage line.
func flagError(cmd *cobra.Command, err error) error {
	var (
		invalid  *pflag.InvalidValueError
		required *pflag.ValueRequiredError
		notExist *pflag.NotExistError
		syntax   *pflag.InvalidSyntaxError
	)
	var msg string
	switch {
	case errors.As(err, &invalid):
		f := invalid.GetFlag()
		msg = fmt.Sprintf("invalid value %q for %s: want %s", invalid.GetValue(), flagNames(f), wants(f))
	case errors.As(err, &required):
		f := required.GetFlag()
		msg = fmt.Sprintf("missing value for %s: %s", flagNames(f), wantsOrHelp(f))
	case errors.As(err, &notExist):
		msg = unknownFlag(cmd, notExist)
	case errors.As(err, &syntax):
		msg = fmt.Sprintf("bad flag syntax %s: a flag is -x or --name", syntax.GetSpecifiedFlag())
	default:
		return withUsageLine(cmd, err)
	}
	return withUsageLine(cmd, errors.New(msg))
}

// withUsageLine adds cmd's usage line to err, once.
func withUsageLine(cmd *cobra.Command, err error) error {
	if err == nil || strings.Contains(err.Error(), "usage: ") {
		return err
	}
	return fmt.Errorf("%w\nusage: %s", err, cmd.UseLine())
}

// flagNames is how f is spelled on the command line: "-n/--results", or
// "--wing" for a flag without a shorthand.
func flagNames(f *pflag.Flag) string {
	if f.Shorthand != "" && f.ShorthandDeprecated == "" {
		return "-" + f.Shorthand + "/--" + f.Name
	}
	return "--" + f.Name
}

// wants says what value f takes, from its type.
func wants(f *pflag.Flag) string {
	switch f.Value.Type() {
	case "int", "int8", "int16", "int32", "int64":
		return "a whole number"
	case "uint", "uint8", "uint16", "uint32", "uint64":
		return "a whole number, 0 or more"
	case "float32", "float64":
		return "a number"
	case "bool":
		return "true or false"
	case "duration":
		return "a duration such as 30s, 5m or 1h30m"
	case "stringSlice", "stringArray":
		return "one or more values separated by commas"
	}
	return "a value"
}

// wantsOrHelp is "want" and what f takes when its type says (wants), else
// f's help text, which for a string flag names what it takes.
func wantsOrHelp(f *pflag.Flag) string {
	if w := wants(f); w != "a value" || f.Usage == "" {
		return "want " + w
	}
	return f.Usage
}

// unknownFlag says that the flag e names is not one of cmd's, with the
// flags it is close to; when none is and cmd takes text, how to pass text
// that begins with '-' instead.
func unknownFlag(cmd *cobra.Command, e *pflag.NotExistError) string {
	name, group := e.GetSpecifiedName(), e.GetSpecifiedShortnames()
	var msg string
	var near []string
	if group == "" {
		msg = "unknown flag --" + name
		near = nearestFlags(cmd.Flags(), name)
	} else {
		msg = "unknown flag -" + name
		if group != name {
			msg += " in -" + group
		}
		// "-json" is read as -j -s -o -n: the flag meant is --json.
		near = nearestFlags(cmd.Flags(), group)
	}
	if len(near) > 0 {
		for i, n := range near {
			near[i] = "--" + n
		}
		return msg + "; did you mean " + strings.Join(near, " or ") + "?"
	}
	if cmd.Annotations[textArgs] != "" {
		msg += " (to pass text that begins with '-', put -- before it)"
	}
	return msg
}

// maxFlagDistance is how many edits (Levenshtein distance) a mistyped
// flag name may be from the one it is taken for.
const maxFlagDistance = 2

// nearestFlags are the names of fs's visible flags closest to typed: the
// ones at the least edit distance, when that is at most maxFlagDistance
// and less than the typed name's length, else the ones typed begins, in
// name order.
func nearestFlags(fs *pflag.FlagSet, typed string) []string {
	typed = strings.ToLower(typed)
	best := maxFlagDistance + 1
	var near, prefixed []string
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Deprecated != "" {
			return
		}
		d := levenshtein.ComputeDistance(typed, f.Name)
		switch {
		case d >= len([]rune(typed)):
			// So far that any name of that length is as near.
		case d < best:
			best, near = d, []string{f.Name}
		case d == best:
			near = append(near, f.Name)
		}
		if len(typed) >= 2 && strings.HasPrefix(f.Name, typed) {
			prefixed = append(prefixed, f.Name)
		}
	})
	if len(near) == 0 {
		near = prefixed
	}
	slices.Sort(near)
	return near
}
