package logarg

import (
	"context"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
)

func TestValue(t *testing.T) {
	args := []interface{}{"peer", "n2", "error", "boom", "dangling"}
	for _, c := range []struct {
		key  string
		want interface{}
	}{{"peer", "n2"}, {"error", "boom"}, {"dangling", nil}, {"absent", nil}} {
		if got := Value(args, c.key); got != c.want {
			t.Errorf("Value(%q) = %v, want %v", c.key, got, c.want)
		}
	}
}

// causeErr wraps its cause as go-msgpack's errors do: behind Cause only.
type causeErr struct{ cause error }

func (e causeErr) Error() string { return "msgpack decode error: " + e.cause.Error() }
func (e causeErr) Cause() error  { return e.cause }

func TestStoppedHere(t *testing.T) {
	closedRead := &net.OpError{Op: "read", Net: "tcp", Err: net.ErrClosed}
	for _, c := range []struct {
		name string
		err  interface{}
		want bool
	}{
		{"read on a connection closed here", closedRead, true},
		{"wrapped", fmt.Errorf("appending: %w", closedRead), true},
		{"behind Cause", causeErr{closedRead}, true},
		{"dial cancelled", &net.OpError{Op: "dial", Net: "tcp", Err: context.Canceled}, true},
		{"peer closed", io.EOF, false},
		{"peer reset", causeErr{syscall.ECONNRESET}, false},
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, false},
		{"timeout", context.DeadlineExceeded, false},
		{"not an error", "use of closed network connection", false},
		{"absent", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := []interface{}{"peer", "n2"}
			if c.err != nil {
				args = append(args, "error", c.err)
			}
			if got := StoppedHere(args); got != c.want {
				t.Fatalf("StoppedHere(%v) = %v, want %v", c.err, got, c.want)
			}
		})
	}
}
