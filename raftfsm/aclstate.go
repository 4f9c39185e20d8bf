package raftfsm

import (
	"sort"
	"sync/atomic"

	"github.com/goblindb/goblin/acl"
	"github.com/goblindb/goblin/command"
)

// The ACL users are part of the replicated state, beside the keyspace.
//
// A state that never applied an ACL entry has no users (Users is nil): a
// data directory from before ACLs, or a new cluster whose nodes were
// started without --requirepass or --aclfile. Each node then enforces its
// own operator configuration, as Goblin always did. The first ACL entry
// gives the state users: its Init (the proposer's configuration) if it
// has one, Redis's open default user otherwise; from then on every node
// enforces the replicated users.
//
// Configs records, per node, the digest of the operator configuration
// that node last had applied: a node proposes its configuration (an
// ACLConfig entry) when it starts with one the state has not applied from
// it, so restarting a node with the same flags keeps what ACL SETUSER
// changed since, and restarting it with new ones applies them.

// aclState is the ACL part of the state machine.
type aclState struct {
	users   *acl.Users        // nil until an ACL entry is applied
	configs map[string]string // node ID → digest of its configuration applied
}

func (s aclState) clone() aclState {
	c := aclState{users: s.users}
	if s.configs != nil {
		c.configs = make(map[string]string, len(s.configs))
		for k, v := range s.configs {
			c.configs[k] = v
		}
	}
	return c
}

// ACLUsers returns the replicated users, or nil while the state has none
// (nodes then enforce their own configuration). Safe to call from any
// goroutine; the result is immutable.
func (a *Applier) ACLUsers() *acl.Users { return a.aclUsers.Load() }

// ACLConfigDigest returns the digest of node's operator configuration the
// state last applied ("" for none). Safe from any goroutine.
func (a *Applier) ACLConfigDigest(node string) string {
	m := a.aclDigests.Load()
	if m == nil {
		return ""
	}
	return (*m)[node]
}

// OnACLChange sets the function called after an entry changes the users,
// with the new users and the names of the users whose connections must be
// closed (deleted users; every user but the default one when the users
// are replaced, as Redis's ACL LOAD does). It runs on the state machine's
// goroutine and must not block.
func (a *Applier) OnACLChange(fn func(users *acl.Users, dropped []string)) {
	a.aclChanged.Store(&fn)
}

// setACL installs a new ACL state and publishes it.
func (a *Applier) setACL(s aclState, dropped []string) {
	changed := s.users != a.acl.users
	a.acl = s
	a.aclUsers.Store(s.users)
	digests := s.configs
	a.aclDigests.Store(&digests)
	if changed {
		if fn := a.aclChanged.Load(); fn != nil {
			(*fn)(s.users, dropped)
		}
	}
}

type aclPublished struct {
	aclUsers   atomic.Pointer[acl.Users]
	aclDigests atomic.Pointer[map[string]string]
	aclChanged atomic.Pointer[func(*acl.Users, []string)]
}

// applyACL applies an OpACL entry and returns its reply.
func (a *Applier) applyACL(c *ACLChange) []byte {
	a.w.Reset()
	a.w.Proto = 2
	if ValidateACL(c) != nil {
		// Proposers validate; an entry that is not valid anyway (written
		// by something else) changes nothing, on every node alike.
		a.w.Error(errACLEntry)
		return a.reply()
	}
	st := a.acl.clone()
	if st.users == nil && c.Init != nil {
		if err := applyConfig(&st, c.Init); err != nil {
			a.w.Error(err)
			return a.reply()
		}
	}
	if st.users == nil {
		st.users = acl.NewUsers()
	}
	old := a.acl.users
	var dropped []string
	switch c.Kind {
	case ACLSetUser:
		u := c.Users[0]
		nu, err := acl.SetUser(st.users.Get(u.Name), u.Name, u.Rules)
		if err != nil {
			a.w.Error(err)
			return a.reply()
		}
		st.users = st.users.With(nu)
		a.w.OK()
	case ACLDelUser:
		names := make([]string, len(c.Users))
		for i, u := range c.Users {
			names[i] = u.Name
		}
		us, n, err := st.users.Without(names)
		if err != nil {
			a.w.Error(err)
			return a.reply()
		}
		for _, name := range names {
			if st.users.Get(name) != nil {
				dropped = append(dropped, name)
			}
		}
		st.users = us
		a.w.Int(int64(n))
	case ACLLoad:
		us, err := buildUsers(c.Users)
		if err != nil {
			a.w.Error(err)
			return a.reply()
		}
		st.users = us
		dropped = allButDefault(old)
		if c.Node != "" {
			st.record(c.Node, c.Digest)
		}
		a.w.OK()
	case ACLConfig:
		if err := applyConfig(&st, c); err != nil {
			a.w.Error(err)
			return a.reply()
		}
		if c.Replace {
			dropped = allButDefault(old)
		}
		a.w.OK()
	default:
		a.w.Error(errACLEntry)
		return a.reply()
	}
	a.setACL(st, dropped)
	return a.reply()
}

var errACLEntry = command.Errorf("ERR unknown ACL change")

// applyConfig applies a node's operator configuration to st unless st
// already applied this one from that node.
func applyConfig(st *aclState, c *ACLChange) error {
	if st.users != nil && st.configs[c.Node] == c.Digest {
		return nil
	}
	if st.users == nil {
		st.users = acl.NewUsers()
	}
	if c.Replace {
		us, err := buildUsers(c.Users)
		if err != nil {
			return err
		}
		st.users = us
	} else {
		for _, u := range c.Users {
			nu, err := acl.SetUser(st.users.Get(u.Name), u.Name, u.Rules)
			if err != nil {
				return err
			}
			st.users = st.users.With(nu)
		}
	}
	st.record(c.Node, c.Digest)
	return nil
}

func (s *aclState) record(node, digest string) {
	if s.configs == nil {
		s.configs = map[string]string{}
	}
	s.configs[node] = digest
}

// buildUsers builds a whole set of users, each from a new user.
func buildUsers(users []ACLUser) (*acl.Users, error) {
	built := make([]*acl.User, 0, len(users))
	for _, u := range users {
		nu, err := acl.SetUser(nil, u.Name, u.Rules)
		if err != nil {
			return nil, err
		}
		built = append(built, nu)
	}
	return acl.NewUsersFrom(built), nil
}

func allButDefault(us *acl.Users) []string {
	if us == nil {
		return nil
	}
	var out []string
	for _, n := range us.Names() {
		if n != acl.DefaultUser {
			out = append(out, n)
		}
	}
	return out
}

// sortedConfigs returns the recorded configurations in node order (for
// the snapshot: the same state writes the same bytes).
func (s aclState) sortedConfigs() [][2]string {
	out := make([][2]string, 0, len(s.configs))
	for n, d := range s.configs {
		out = append(out, [2]string{n, d})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}
