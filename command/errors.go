package command

import (
	"bytes"
	"fmt"

	"github.com/goblindb/goblin/resp/wire"
)

// Error is a command error whose text is exactly what Redis replies,
// including the error code prefix ("ERR", "WRONGTYPE", ...).
type Error struct{ msg string }

func (e *Error) Error() string { return e.msg }

// ReplyText is the error reply's text, code first (wire.ReplyError).
func (e *Error) ReplyText() string { return e.msg }

// Errorf returns an Error with a formatted text. The text must start with
// the error code. Newlines are replaced by spaces, as Redis does.
func Errorf(format string, args ...any) *Error {
	s := fmt.Sprintf(format, args...)
	return &Error{msg: wire.OneLine(s)}
}

// The errors Redis replies most, word for word.
var (
	ErrSyntax         = &Error{"ERR syntax error"}
	ErrNotInteger     = &Error{"ERR value is not an integer or out of range"}
	ErrNotFloat       = &Error{"ERR value is not a valid float"}
	ErrMinMaxFloat    = &Error{"ERR min or max is not a float"}
	ErrMinMaxLex      = &Error{"ERR min or max not valid string range item"}
	ErrNaN            = &Error{"ERR resulting score is not a number (NaN)"}
	ErrWrongType      = &Error{"WRONGTYPE Operation against a key holding the wrong kind of value"}
	ErrDBIndex        = &Error{"ERR DB index is out of range"}
	ErrXXNX           = &Error{"ERR XX and NX options at the same time are not compatible"}
	ErrGTLTNX         = &Error{"ERR GT, LT, and/or NX options at the same time are not compatible"}
	ErrIncrPair       = &Error{"ERR INCR option supports a single increment-element pair"}
	ErrLimitRank      = &Error{"ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"}
	ErrWithscoresLex  = &Error{"ERR syntax error, WITHSCORES not supported in combination with BYLEX"}
	ErrNoSuchKey      = &Error{"ERR no such key"}
	ErrOutOfRange     = &Error{"ERR value is out of range"}
	ErrPackedMember   = &Error{"ERR member is not valid for the key's packed layout"}
	ErrPackedLexBound = &Error{"ERR min or max is not a valid member for the key's packed layout"}
)

// ArityError is the reply to a command called with the wrong number of
// arguments; fullname is the lowercase name ("zadd", "client|setname").
func ArityError(fullname string) *Error {
	return Errorf("ERR wrong number of arguments for '%s' command", fullname)
}

// cstr returns b up to its first NUL byte, as C's %s would print it.
func cstr(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

func trunc(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// UnknownCommandError is Redis's reply to a command name it does not know.
func UnknownCommandError(argv [][]byte) *Error {
	var args []byte
	for i := 1; i < len(argv) && len(args) < 128; i++ {
		avail := 128 - len(args)
		args = append(args, '\'')
		args = append(args, trunc(cstr(argv[i]), avail)...)
		args = append(args, '\'', ' ')
	}
	return Errorf("ERR unknown command '%s', with args beginning with: %s", trunc(cstr(argv[0]), 128), args)
}

// UnknownSubcommandError is Redis's reply to an unknown subcommand of a
// container command such as CLIENT or CONFIG.
func UnknownSubcommandError(argv [][]byte) *Error {
	return Errorf("ERR unknown subcommand '%s'. Try %s HELP.", trunc(cstr(argv[1]), 128), bytes.ToUpper(cstr(argv[0])))
}

// SubcommandSyntaxError is Redis's reply to a subcommand used with the
// wrong arguments, when the container command checks them itself.
func SubcommandSyntaxError(argv [][]byte) *Error {
	return Errorf("ERR unknown subcommand or wrong number of arguments for '%s'. Try %s HELP.", trunc(cstr(argv[1]), 128), bytes.ToUpper(cstr(argv[0])))
}
