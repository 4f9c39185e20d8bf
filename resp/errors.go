package resp

import (
	"errors"

	"github.com/goblindb/goblin/command"
	"github.com/goblindb/goblin/node"
)

var (
	errNoAuth     = command.Errorf("NOAUTH Authentication required.")
	errWrongPass  = command.Errorf("WRONGPASS invalid username-password pair or user is disabled.")
	errNoPassword = command.Errorf("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
	errNotAllowed = command.Errorf("ERR Command not allowed inside a transaction")
	errOOM        = command.Errorf("OOM command not allowed when used memory > 'maxmemory'.")
)

// translate turns a node error into the reply a Redis client understands.
//
// TRYAGAIN and CLUSTERDOWN tell a client the command was not executed, and
// Redis clients retry them (go-redis, redis-py's RedisCluster): they are
// given only when that is certain. A write whose outcome the node could
// not learn gets UNCERTAIN, a code no Redis client retries by itself.
func translate(err error) error {
	switch {
	case errors.Is(err, node.ErrNoLeader):
		return command.Errorf("CLUSTERDOWN no leader: the cluster is electing one or has lost its majority; retry shortly")
	case errors.Is(err, node.ErrNotLeader):
		return command.Errorf("TRYAGAIN this node is not the leader; retry shortly")
	case errors.Is(err, node.ErrTimeout):
		return command.Errorf("TRYAGAIN timed out waiting for the cluster; retry shortly")
	case errors.Is(err, node.ErrNotApplied):
		return command.Errorf("TRYAGAIN leadership changed before the write was committed: it was not applied; retry")
	case errors.Is(err, node.ErrUncertain):
		return command.Errorf("UNCERTAIN leadership changed while the write was in flight and its outcome could not be learned in time: it may or may not have been applied")
	case errors.Is(err, node.ErrClosed):
		return command.Errorf("ERR server is shutting down")
	case errors.Is(err, node.ErrOOM):
		return errOOM
	case errors.Is(err, node.ErrLogWrite):
		// Redis's wording for a failing AOF, naming the Raft log.
		reason := err.Error()
		var lw *node.LogWriteError
		if errors.As(err, &lw) {
			reason = lw.Reason()
		}
		return command.Errorf("MISCONF Errors writing to the Raft log: %s", reason)
	case errors.Is(err, node.ErrEntryTooLarge):
		return command.Errorf("ERR %s", err.Error())
	case errors.Is(err, node.ErrStale):
		return command.Errorf("CLUSTERDOWN this replica may be more than max-staleness behind the leader; READWRITE for a linearizable read")
	}
	return err
}
