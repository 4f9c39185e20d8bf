// Package logarg reads the key-value lists that hclog's logging methods
// take, for the loggers that wrap a library's logger and decide a line's
// level by what it says (Raft's, its transport's).
package logarg

import (
	"context"
	"errors"
	"net"
)

// Value is the value given for key in args (key, value, key, value, ...),
// or nil when key is not among them.
func Value(args []interface{}, key string) interface{} {
	for i := 0; i+1 < len(args); i += 2 {
		if k, ok := args[i].(string); ok && k == key {
			return args[i+1]
		}
	}
	return nil
}

// StoppedHere reports whether the "error" of args ended because this
// process closed or cancelled what it was using: a read or write on a
// connection closed at this end (net.ErrClosed), a dial cancelled
// (context.Canceled), or one of also (a library's own shutdown error).
// Errors wrapped by fmt.Errorf and by go-msgpack (which keeps its cause
// behind Cause, not Unwrap) are looked through.
func StoppedHere(args []interface{}, also ...error) bool {
	err, _ := Value(args, "error").(error)
	for err != nil {
		if errors.Is(err, net.ErrClosed) || errors.Is(err, context.Canceled) {
			return true
		}
		for _, target := range also {
			if errors.Is(err, target) {
				return true
			}
		}
		c, ok := err.(interface{ Cause() error })
		if !ok {
			return false
		}
		err = c.Cause()
	}
	return false
}
