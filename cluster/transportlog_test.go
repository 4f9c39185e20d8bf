package cluster

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// A stream this node closed itself, its transport's shutdown, or a peer
// resetting its connection, is not an error of the transport's.
func TestTransportLoggerClosedStream(t *testing.T) {
	var out bytes.Buffer
	l := transportLogger{hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: &out})}
	closed := &net.OpError{Op: "read", Net: "tcp", Err: net.ErrClosed}
	l.Error(msgDecodeFailed, "error", closed)
	l.Error(msgDecodeFailed, "error", raft.ErrTransportShutdown)
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	l.Error(msgDecodeFailed, "error", reset)
	if out.Len() != 0 {
		t.Fatalf("closed here logged at info or above: %s", out.String())
	}
	l.Error(msgDecodeFailed, "error", errors.New("msgpack decode error"))
	l.Error(msgDecodeFailed, "error", io.ErrUnexpectedEOF)
	if n := strings.Count(out.String(), "[ERROR]"); n != 2 {
		t.Fatalf("want 2 errors, logged:\n%s", out.String())
	}
}
