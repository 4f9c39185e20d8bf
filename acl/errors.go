package acl

import (
	"errors"
	"fmt"
)

// Why a rule was refused, in Redis's words.
var (
	ErrUnknownCommand  = errors.New("Unknown command or category name in ACL")
	ErrSyntax          = errors.New("Syntax error")
	ErrKeyAfterAll     = errors.New("Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns")
	ErrChannelAfterAll = errors.New("Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels")
	ErrNoSuchPassword  = errors.New("The password you are trying to remove from the user does not exist")
	ErrBadHash         = errors.New("The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters")
	ErrSubcommandArg   = errors.New("Allowing first-arg of a subcommand is not supported")
)

// Errors of whole commands, in Redis's words.
var (
	ErrBadUsername   = errors.New("Usernames can't contain spaces or null characters")
	ErrDeleteDefault = errors.New("The 'default' user cannot be removed")
)

// RuleError is a rule SetUser refused.
type RuleError struct {
	Rule string
	Err  error
}

func (e *RuleError) Error() string {
	return fmt.Sprintf("Error in ACL SETUSER modifier '%s': %s", e.Rule, e.Err)
}

func (e *RuleError) Unwrap() error { return e.Err }

// UnmatchedError is a selector whose opening parenthesis is never closed.
type UnmatchedError struct{ Rule string }

func (e *UnmatchedError) Error() string {
	return fmt.Sprintf("Unmatched parenthesis in acl selector starting at '%s'.", e.Rule)
}
