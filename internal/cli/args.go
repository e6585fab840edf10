package cli

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// groupCommand makes cmd, which only groups subcommands, refuse an unknown
// one: cobra checks subcommand names only at the root, and below it prints
// the help and exits 0 for a typo. Without an argument it prints the help.
func groupCommand(cmd *cobra.Command) *cobra.Command {
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		return unknownSubcommand(cmd, args[0])
	}
	cmd.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	return cmd
}

// unknownSubcommand is the error for name, none of cmd's subcommands,
// with the ones it is close to.
func unknownSubcommand(cmd *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %q", name, cmd.CommandPath())
	cmd.SuggestionsMinimumDistance = 2
	if s := cmd.SuggestionsFor(name); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return errors.New(msg)
}

// textArgs marks a command whose positional arguments are free text (a
// note, a fact, a query), which may begin with '-'.
const textArgs = "hivemem/text-args"

// takesText marks cmd's positional arguments as text (see textAfterDash);
// an unknown flag close to none of cmd's then says how to pass text that
// begins with '-' (flagError).
func takesText(cmd *cobra.Command) *cobra.Command {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[textArgs] = "true"
	return cmd
}

// textAfterDash lets the text arguments of a takesText command begin with
// '-' (a markdown bullet "- fixed the test", a query "-skew cookie"): an
// argument after the command's name that is not one of its flags is moved,
// with the positional arguments after it (their order kept), behind a "--",
// so that the flag parser takes it as text. Real flags, wherever they are,
// and an existing "--" keep working; other commands' arguments are left
// alone.
func textAfterDash(root *cobra.Command, args []string) []string {
	cmd, _, err := root.Find(args)
	if err != nil || cmd.Annotations[textArgs] == "" {
		return args
	}
	cmd.InitDefaultHelpFlag()
	_ = cmd.InheritedFlags() // merges the persistent flags into cmd.Flags()
	fs := cmd.Flags()
	names := len(strings.Fields(cmd.CommandPath())) - 1 // command names to pass
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return args
		case a == "-" || !strings.HasPrefix(a, "-"):
			if names > 0 {
				names--
			}
		case names == 0 && isText(fs, a):
			return moveText(fs, args, i)
		case takesValue(fs, a):
			i++
		}
	}
	return args
}

// moveText rebuilds args with the flags from i on kept in place and the
// positional arguments from i on put behind a "--".
func moveText(fs *pflag.FlagSet, args []string, i int) []string {
	out := append([]string{}, args[:i]...)
	var text []string
	for j := i; j < len(args); j++ {
		a := args[j]
		switch {
		case a == "--":
			text = append(text, args[j+1:]...)
			j = len(args)
		case a != "-" && strings.HasPrefix(a, "-") && !isText(fs, a):
			out = append(out, a)
			if takesValue(fs, a) && j+1 < len(args) {
				j++
				out = append(out, args[j])
			}
		default:
			text = append(text, a)
		}
	}
	return append(append(out, "--"), text...)
}

// isText reports whether a, which begins with '-', is text rather than a
// flag: a single dash followed by anything but one of fs's shorthands, or
// with a blank in it ("- note", "-skew cookie"). "--name" is always taken
// as a flag, so that a mistyped flag stays an error.
func isText(fs *pflag.FlagSet, a string) bool {
	if strings.HasPrefix(a, "--") {
		return false
	}
	if strings.IndexFunc(a, unicode.IsSpace) >= 0 {
		return true
	}
	r, _ := utf8.DecodeRuneInString(a[1:])
	return r >= utf8.RuneSelf || fs.ShorthandLookup(string(r)) == nil
}

// takesValue reports whether the flag a (not text) takes the next argument
// as its value: "--name" or "-x" for a flag that needs a value.
func takesValue(fs *pflag.FlagSet, a string) bool {
	var f *pflag.Flag
	if name, ok := strings.CutPrefix(a, "--"); ok {
		if strings.Contains(name, "=") {
			return false
		}
		f = fs.Lookup(name)
	} else {
		// A run of shorthands "-abc": the last one may take the next
		// argument, the others must be booleans.
		for k := 1; k < len(a); k++ {
			if a[k] >= utf8.RuneSelf {
				return false
			}
			f = fs.ShorthandLookup(a[k : k+1])
			if f == nil {
				return false
			}
			if f.NoOptDefVal == "" {
				return k == len(a)-1
			}
		}
		return false
	}
	return f != nil && f.NoOptDefVal == ""
}

// nonEmpty marks a flag whose empty value would silently mean its default
// ("all agents", "no agent"): given empty, it is refused.
const nonEmpty = "hivemem/non-empty"

// refuseEmpty marks cmd's flags names as refusing an empty value. Leaving
// such a flag out keeps its default; `--agent ""` (an unset variable in a
// script) is an error, not a wider scope.
func refuseEmpty(cmd *cobra.Command, names ...string) {
	for _, n := range names {
		if err := cmd.Flags().SetAnnotation(n, nonEmpty, []string{"true"}); err != nil {
			panic(err) // a programming error: no such flag
		}
	}
}

// given has cmd set *was, before it runs, to whether its flag name was
// given: for a count whose absence means a configured default, so that
// the app refuses an explicit 0 (app.SearchRequest.ResultsGiven) rather
// than taking it for that default.
func given(cmd *cobra.Command, name string, was *bool) {
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error {
		*was = cmd.Flags().Changed(name)
		return nil
	}
}

// checkNonEmpty refuses a nonEmpty flag that was given ("Changed") with an
// empty value.
func checkNonEmpty(cmd *cobra.Command) error {
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if err == nil && f.Annotations[nonEmpty] != nil && f.Value.String() == "" {
			err = fmt.Errorf("--%s is empty: give a value or leave the flag out", f.Name)
		}
	})
	return err
}
