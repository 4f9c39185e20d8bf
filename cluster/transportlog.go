package cluster

import (
	"syscall"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/goblindb/goblin/internal/logarg"
)

// transportLogger is the logger of Raft's transport: the cluster's, with
// the end of an incoming stream this node closed itself (its transport
// shutting down as goblind stops, or the plane closing a connection), or
// that its peer reset (a peer stopping or killed, which gossip reports),
// at debug level instead of as an error. Every stop of a node logged one
// error per peer connection.
type transportLogger struct{ hclog.Logger }

// msgDecodeFailed is the transport's message when reading a request from
// an incoming stream fails.
const msgDecodeFailed = "failed to decode incoming command"

func (l transportLogger) Error(msg string, args ...interface{}) {
	if msg == msgDecodeFailed && logarg.StoppedHere(args, raft.ErrTransportShutdown, syscall.ECONNRESET) {
		l.Logger.Debug(msg, args...)
		return
	}
	l.Logger.Error(msg, args...)
}
