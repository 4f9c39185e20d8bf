package raftfsm

import (
	"errors"
	"fmt"

	"github.com/goblindb/goblin/command"
	"github.com/goblindb/goblin/keyspace"
)

// ErrInvalidEntry is wrapped by Validate's errors: the entry must not be
// proposed.
var ErrInvalidEntry = errors.New("raftfsm: entry may not be proposed")

// Validate checks an entry as a leader must before proposing it for
// someone else (a follower forwarding a client's writes): it must be one
// a client edge could have built. That is a command entry (OpCommand with
// one command, OpBatch with at least one, OpMulti), in protocol 2 or 3,
// with databases in range, whose commands are all known and take their
// number of arguments; outside a transaction each is a write whose own
// Validate accepts its arguments, as the edge checks before proposing.
// Inside a transaction any command a client may queue is accepted, and
// bad arguments are answered at EXEC, as Redis does. An ACL change
// (OpACL) is accepted when ValidateACL accepts it, a piece of a split
// entry (OpChunk) when it is well formed. Other ops are the
// leader's own business and are refused.
//
// The Applier does not rely on Validate: it answers any decodable entry
// without panicking. Validate keeps out of the log what no client could
// have sent.
func Validate(e *Entry) error {
	if e.Op == OpChunk {
		return validateChunk(e)
	}
	if e.Op == OpACL {
		if err := ValidateACL(e.ACL); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidEntry, err)
		}
		return nil
	}
	if e.Proto != 2 && e.Proto != 3 {
		return fmt.Errorf("%w: protocol %d", ErrInvalidEntry, e.Proto)
	}
	switch e.Op {
	case OpCommand, OpBatch:
		if (e.Op == OpCommand && len(e.Commands) != 1) || len(e.Commands) == 0 {
			return fmt.Errorf("%w: %v with %d commands", ErrInvalidEntry, e.Op, len(e.Commands))
		}
		if len(e.Watched) != 0 {
			return fmt.Errorf("%w: %v with watched keys", ErrInvalidEntry, e.Op)
		}
		for i := range e.Commands {
			if err := validateWrite(&e.Commands[i]); err != nil {
				return fmt.Errorf("%w: command %d: %w", ErrInvalidEntry, i, err)
			}
		}
	case OpMulti:
		for _, w := range e.Watched {
			if !dbInRange(w.DB) {
				return fmt.Errorf("%w: watched key in database %d", ErrInvalidEntry, w.DB)
			}
		}
		for i := range e.Commands {
			if err := validateQueued(&e.Commands[i]); err != nil {
				return fmt.Errorf("%w: command %d: %w", ErrInvalidEntry, i, err)
			}
		}
	default:
		return fmt.Errorf("%w: op %v", ErrInvalidEntry, e.Op)
	}
	if len(e.Expired) != 0 || len(e.Rules) != 0 {
		return fmt.Errorf("%w: %v with expired keys or rules", ErrInvalidEntry, e.Op)
	}
	return nil
}

func dbInRange(db int) bool { return db >= 0 && db < keyspace.NumDBs }

// validateWrite checks a command as the edge does before proposing it
// outside a transaction: a known write whose arguments its Validate
// accepts.
func validateWrite(c *Command) error {
	spec, err := checkCommand(c)
	if err != nil {
		return err
	}
	if spec.Flags&command.Write == 0 {
		return fmt.Errorf("%s is not a write", spec.Name)
	}
	if spec.Validate != nil {
		return spec.Validate(c.Argv)
	}
	return nil
}

// validateQueued checks a command as the edge does when MULTI queues it.
func validateQueued(c *Command) error {
	spec, err := checkCommand(c)
	if err != nil {
		return err
	}
	if spec.Flags&command.NoMulti != 0 {
		return fmt.Errorf("%s is not allowed in a transaction", spec.Name)
	}
	return nil
}

// checkCommand checks what every proposed command needs: a database in
// range, a known name, the right number of arguments and a known
// subcommand.
func checkCommand(c *Command) (*command.Spec, error) {
	if !dbInRange(c.DB) {
		return nil, fmt.Errorf("database %d", c.DB)
	}
	if len(c.Argv) == 0 {
		return nil, errors.New("no command name")
	}
	spec := command.Lookup(c.Argv[0])
	if spec == nil {
		return nil, command.UnknownCommandError(c.Argv)
	}
	if !spec.CheckArity(len(c.Argv)) {
		return nil, command.ArityError(spec.Name)
	}
	if err := spec.CheckSub(c.Argv); err != nil {
		return nil, err
	}
	return spec, nil
}
