package resp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/goblindb/goblin/acl"
	"github.com/goblindb/goblin/raftfsm"
)

// ACL users at the edge.
//
// The users every node enforces are the replicated ones (ACLSource: the
// state machine's copy). Until the replicated state has users, a node
// enforces its operator configuration (OperatorACL: the default user with
// --requirepass, or the users of --aclfile), as Goblin did before users
// were replicated. The server keeps the users in force in one atomic
// pointer, which the state machine's change hook updates; a connection
// compares it with the set it resolved its user from before each command
// (one load and one compare), and resolves its user again by name when it
// changed.
//
// Changes (ACL SETUSER, DELUSER, LOAD, CONFIG SET requirepass) are
// proposed as OpACL entries. Each carries the node's operator
// configuration as its Init, which the state machine applies first if the
// state has no users yet, so a change never builds on an open default
// user where the operator configured a password. A node also proposes its
// configuration once it can (SyncACL) when the state has not applied that
// configuration from it: starting a node with new flags applies them;
// restarting it with the same ones keeps the changes made since.
//
// Until then the users in force may be stale: a restarted node enforces
// its flags, then the users of its log as they are replayed (a password
// CONFIG SET has since replaced among them), and only then its flags'
// change again. A connection authenticated in that window, implicitly by
// an open default user or by a password since replaced, would stay
// authenticated. So SyncACL also settles the users: a connection made
// before they are settled (the node has caught up with the log through a
// linearizable read barrier, and applied its configuration) waits for
// that before its first command, at most aclSettleWait, and then takes
// its user afresh.

// ACLSource is the replicated ACL users (raftfsm.Applier implements it).
type ACLSource interface {
	// ACLUsers returns the replicated users, nil while there are none.
	ACLUsers() *acl.Users
	// ACLConfigDigest returns the digest of node's operator
	// configuration the state last applied.
	ACLConfigDigest(node string) string
	// OnACLChange sets the function called after the users change, with
	// the names whose connections must be closed.
	OnACLChange(fn func(users *acl.Users, dropped []string))
}

// OperatorACL is a node's operator configuration of users.
type OperatorACL struct {
	// Users are enforced while the replicated state has none.
	Users *acl.Users
	// Change is the configuration as proposed to the log (an ACLConfig
	// entry), nil when the operator configured nothing (no requirepass,
	// no aclfile): such a node follows the replicated users, and a state
	// without users gets Redis's default user.
	Change *raftfsm.ACLChange
	// File is the aclfile (ACL LOAD and SAVE), "" for none.
	File string
	// Warn, if set, logs what Redis logs (why ACL SAVE failed).
	Warn func(msg string, args ...any)
}

// NewOperatorACL builds a node's operator configuration: the users of
// aclfile when given (an error names what is wrong in it, as Redis
// refuses to start), otherwise the default user with requirepass ("" for
// none). node identifies the node in the replicated state.
func NewOperatorACL(node, requirepass, aclfile string) (*OperatorACL, error) {
	op := &OperatorACL{File: aclfile}
	if aclfile != "" {
		data, err := os.ReadFile(aclfile)
		if err != nil {
			return nil, acl.OpenError(aclfile, err)
		}
		users, set, err := acl.ParseFile(aclfile, data)
		if err != nil {
			return nil, err
		}
		op.Users = set
		op.Change = &raftfsm.ACLChange{Kind: raftfsm.ACLConfig, Node: node, Replace: true, Users: fileUsers(users)}
		op.Change.Digest = digestOf(op.Change)
		return op, nil
	}
	op.Users = acl.NewUsers()
	if requirepass == "" {
		return op, nil
	}
	rules := defaultPasswordRules(requirepass)
	u, err := acl.SetUser(op.Users.Default(), acl.DefaultUser, rules)
	if err != nil {
		return nil, err
	}
	op.Users = op.Users.With(u)
	op.Change = &raftfsm.ACLChange{Kind: raftfsm.ACLConfig, Node: node,
		Users: []raftfsm.ACLUser{{Name: acl.DefaultUser, Rules: acl.HashRules(rules)}}}
	op.Change.Digest = digestOf(op.Change)
	return op, nil
}

// defaultPasswordRules are the rules that make pass the default user's
// only password, as Redis applies requirepass ("" makes it nopass).
func defaultPasswordRules(pass string) []string {
	if pass == "" {
		return []string{"resetpass", "nopass"}
	}
	return []string{"resetpass", ">" + pass}
}

// fileUsers converts an aclfile's users to an entry's, passwords hashed.
func fileUsers(users []acl.FileUser) []raftfsm.ACLUser {
	out := make([]raftfsm.ACLUser, len(users))
	for i, u := range users {
		out[i] = raftfsm.ACLUser{Name: u.Name, Rules: acl.HashRules(u.Rules)}
	}
	return out
}

// digestOf is a configuration's digest: SHA-256 of its users and rules
// (passwords already hashed) as the log encodes them.
func digestOf(c *raftfsm.ACLChange) string {
	e := raftfsm.Entry{Op: raftfsm.OpACL, ACL: &raftfsm.ACLChange{Kind: c.Kind, Replace: c.Replace, Users: c.Users}}
	sum := sha256.Sum256(e.Encode(nil))
	return hex.EncodeToString(sum[:])
}

// aclServer is the server's ACL state.
type aclServer struct {
	src ACLSource // nil: the backend has no replicated users
	op  *OperatorACL
	// users is what is enforced: the replicated users, or op.Users
	// while there are none.
	users atomic.Pointer[acl.Users]
	log   *acl.Log
	// settled is closed once the users in force are current: at once
	// unless SyncACL settles them.
	settled atomic.Pointer[chan struct{}]
	// settleBy: past it, connections wait no longer for settled (unix
	// nanoseconds; SyncACL's start plus aclSettleWait).
	settleBy atomic.Int64
}

// initACL sets up the server's users: the operator configuration from
// cfg, and the replicated users of cfg.ACL, or of the backend's state
// machine when the backend exposes one.
func (s *Server) initACL() {
	s.acl.op = s.cfg.OperatorACL
	if s.acl.op == nil {
		op, err := NewOperatorACL(s.cfg.NodeID, s.cfg.RequirePass, "")
		if err != nil {
			panic(err) // a password is always a valid rule
		}
		s.acl.op = op
	}
	if c := s.acl.op.Change; c != nil && c.Node == "" {
		c.Node = s.cfg.NodeID
	}
	s.acl.log = acl.NewLog(acl.DefaultLogMax)
	settled := make(chan struct{})
	close(settled)
	s.acl.settled.Store(&settled)
	s.acl.src = s.cfg.ACL
	if s.acl.src == nil {
		if fb, ok := s.backend.(interface{ FSM() *raftfsm.FSM }); ok {
			s.acl.src = fb.FSM().Applier()
		} else if as, ok := s.backend.(ACLSource); ok {
			s.acl.src = as
		}
	}
	if s.acl.src == nil {
		s.acl.users.Store(s.acl.op.Users)
		return
	}
	s.acl.src.OnACLChange(s.aclChanged)
	cur := s.acl.src.ACLUsers()
	if cur == nil {
		cur = s.acl.op.Users
	}
	s.acl.users.CompareAndSwap(nil, cur)
}

// users returns the users in force.
func (s *Server) users() *acl.Users { return s.acl.users.Load() }

// aclChanged is the state machine's hook: it installs the new users and
// closes the connections of the dropped ones. It runs on the state
// machine's goroutine: it only signals.
func (s *Server) aclChanged(users *acl.Users, dropped []string) {
	if users == nil {
		users = s.acl.op.Users
	}
	s.acl.users.Store(users)
	if len(dropped) == 0 {
		return
	}
	drop := make(map[string]bool, len(dropped))
	for _, n := range dropped {
		drop[n] = true
	}
	s.mu.Lock()
	for _, c := range s.clients {
		if drop[c.userName()] {
			c.kill()
		}
	}
	s.mu.Unlock()
}

// proposeACL proposes an ACL change, with this node's configuration as its
// Init, and waits for its reply.
func (s *Server) proposeACL(c *raftfsm.ACLChange) ([]byte, error) {
	if s.acl.op.Change != nil {
		c.Init = s.acl.op.Change
	}
	res, err := s.backend.Propose(&raftfsm.Entry{Op: raftfsm.OpACL, ACL: c})()
	if err != nil {
		return nil, err
	}
	return res.Reply, nil
}

// aclSyncRetry spaces out SyncACL's attempts while no leader answers.
const aclSyncRetry = 500 * time.Millisecond

// aclSettleWait bounds how long after SyncACL starts a connection made
// before the users are settled waits before its first command. Past it
// (no leader to catch up from) commands run under the users as they are,
// on every connection at once: a node that cannot reach a quorum does not
// hold each new client (a health check's PING) for the whole wait.
const aclSettleWait = time.Second

// SyncACL settles the users in force: it waits until the node has caught
// up with the replicated log and, when the node has an operator
// configuration the state has not applied from it, proposes that
// configuration, retrying until done or the server closes. Connections
// made meanwhile wait for it before their first command. It does nothing
// when the node has no replicated users. Call it before Serve.
func (s *Server) SyncACL() {
	op := s.acl.op
	if s.acl.src == nil {
		return
	}
	settled := make(chan struct{})
	s.acl.settleBy.Store(time.Now().Add(aclSettleWait).UnixNano())
	s.acl.settled.Store(&settled)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(settled)
		for {
			if err := s.syncACLOnce(op); err == nil {
				return
			}
			select {
			case <-s.closing:
				return
			case <-time.After(aclSyncRetry):
			}
		}
	}()
}

// aclUnsettled reports whether the users in force may still change as the
// node catches up (a connection made now waits: aclClient.early).
func (s *Server) aclUnsettled() bool {
	select {
	case <-*s.acl.settled.Load():
		return false
	default:
		return true
	}
}

// awaitACLSettled waits until the users are settled, at most until
// aclSettleWait has passed since SyncACL started, or the server closes.
func (s *Server) awaitACLSettled() {
	wait := time.Until(time.Unix(0, s.acl.settleBy.Load()))
	if wait <= 0 {
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-*s.acl.settled.Load():
	case <-t.C:
	case <-s.closing:
	}
}

func (s *Server) syncACLOnce(op *OperatorACL) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	err := s.backend.ReadBarrier(ctx, false)
	cancel()
	if err != nil {
		return err
	}
	if op.Change == nil || s.acl.src.ACLUsers() != nil && s.acl.src.ACLConfigDigest(op.Change.Node) == op.Change.Digest {
		return nil
	}
	reply, err := s.proposeACL(&raftfsm.ACLChange{Kind: raftfsm.ACLConfig, Node: op.Change.Node,
		Digest: op.Change.Digest, Replace: op.Change.Replace, Users: op.Change.Users})
	if err != nil {
		return err
	}
	if len(reply) > 0 && reply[0] == '-' {
		return fmt.Errorf("resp: applying the ACL configuration: %s", reply[1:])
	}
	return nil
}

// infoACLStats writes INFO's counts of denials since start.
func infoACLStats(s *Server, b *strings.Builder) {
	kv(b, "acl_access_denied_auth", s.acl.log.Denied(acl.DeniedAuth))
	kv(b, "acl_access_denied_cmd", s.acl.log.Denied(acl.DeniedCommand))
	kv(b, "acl_access_denied_key", s.acl.log.Denied(acl.DeniedKey))
	kv(b, "acl_access_denied_channel", s.acl.log.Denied(acl.DeniedChannel))
}
