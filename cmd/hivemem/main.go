package main
import (
 _ "modernc.org/sqlite"
 _ "github.com/spf13/cobra"
 _ "github.com/rogpeppe/go-internal/testscript"
 _ "github.com/BurntSushi/toml"
 _ "github.com/schollz/progressbar/v3"
 _ "github.com/gofrs/flock"
 _ "golang.org/x/sys/cpu"
 _ "golang.org/x/text/unicode/norm"
 _ "golang.org/x/term"
)
func main(){}
