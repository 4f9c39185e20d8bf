package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// parseArgs parses args with fs. Asked for help (-h, --help), it writes
// the usage to stdout, where a pager or grep reads it, and returns
// flag.ErrHelp, which the callers treat as success (exit 0). A bad flag
// writes the usage and then the error, last where it is seen, to fs's
// output (standard error), and returns it as reported: written once.
func parseArgs(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	out, usage := fs.Output(), fs.Usage
	if usage == nil {
		usage = func() {
			fmt.Fprintf(fs.Output(), "Usage of %s:\n", fs.Name())
			fs.PrintDefaults()
		}
	}
	// Parse writes the error and the usage itself, to one output; it is
	// silenced here and each goes where it belongs below.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.Usage = usage
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(stdout)
		usage()
		fs.SetOutput(out)
	case err != nil:
		fs.SetOutput(out)
		usage()
		fmt.Fprintf(out, "%s: %v\n", fs.Name(), err)
		return reported{err}
	default:
		fs.SetOutput(out)
	}
	return err
}

// goblindUsage heads the flags of goblind's own usage.
const goblindUsage = `usage:
  goblind [flags]                  run a node
  goblind ping [flags]             exit 0 if a node answers PING (for healthchecks)
  goblind backup|restore [flags]   back up a node, verify a backup, or restore one
  goblind import [flags]           copy sorted sets from Redis or an RDB file into a node
  goblind gencert [flags]          make a CA and certificates for TLS
Each subcommand lists its own flags with -h.

Every flag below can be set in the environment instead: GOBLIN_ and the flag's name in
capitals, - turned into _ (--raft-addr is GOBLIN_RAFT_ADDR); a flag on the command line wins.
With _FILE appended the variable names a file holding the value (GOBLIN_REQUIREPASS_FILE).

flags:
`

// reported is an error already written where the user sees it.
type reported struct{ error }

func (r reported) Unwrap() error { return r.error }
