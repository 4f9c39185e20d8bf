package main

import (
	"flag"
)

// limitOptions are the client limits, named and meant as Redis's
// settings of the same names (docs/operations.md, "Limits").
type limitOptions struct {
	maxClients int64
}

func (l *limitOptions) register(fs *flag.FlagSet) {
	fs.Int64Var(&l.maxClients, "maxclients", 10000, "client connections held at once; more are refused with Redis's error (lowered at start to what the open files limit holds)")
}
