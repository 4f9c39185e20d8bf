package main

import (
	"errors"
	"flag"
	"path/filepath"

	"github.com/hashicorp/go-hclog"

	"github.com/goblindb/goblin/resp"
)

// aclOptions are the flags of ACL users. A node's users come from
// --aclfile, or are the default user with --requirepass; they are
// replicated through the log (see resp/acl.go and docs/acl.md).
type aclOptions struct {
	file string
}

func (a *aclOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&a.file, "aclfile", "", "file of ACL users (Redis's aclfile format), read at start and by ACL LOAD, written by ACL SAVE")
}

// operator reads the node's configuration of users. A bad aclfile stops
// the start, as it stops Redis's.
func (a *aclOptions) operator(requirePass string, logger hclog.Logger) (*resp.OperatorACL, error) {
	if a.file != "" && requirePass != "" {
		return nil, errors.New("--requirepass and --aclfile cannot be combined: give the default user its password in the aclfile")
	}
	file := a.file
	if file != "" {
		abs, err := filepath.Abs(file)
		if err != nil {
			return nil, err
		}
		file = abs
	}
	op, err := resp.NewOperatorACL("", requirePass, file)
	if err != nil {
		return nil, errors.New("ACL errors: " + err.Error())
	}
	op.Warn = logger.Warn
	return op, nil
}
