package resp

import (
	"sync/atomic"
	"time"

	"github.com/goblindb/goblin/acl"
	"github.com/goblindb/goblin/command"
)

// A connection's user, authentication and permission checks.

// aclClient is a connection's ACL state. user and users are only touched
// by the connection's goroutine; name and killed are read by others (CLIENT
// LIST, the change hook).
type aclClient struct {
	// users is the set user was resolved from; when the server's users
	// change, the connection resolves its user again by name.
	users *acl.Users
	user  *acl.User
	name  atomicString
	// authed is Redis's "authenticated": set by a successful AUTH, or at
	// connection when the default user is on and nopass.
	authed bool
	// open caches whether users' default user is on and nopass, which
	// makes AUTH unnecessary.
	open bool
	// keys is scratch space for the permission check's key positions.
	keys []command.KeyRef
	// killed is set when the connection's user is deleted or replaced:
	// the connection closes after the command it runs, if any.
	killed atomicBool
	// execing: the commands of EXEC run now (the ACL log's context).
	execing bool
	// early: the connection was made before the users were settled; its
	// first command waits for them (Server.SyncACL).
	early bool
}

// initACL gives a new connection the default user, and RESET gives it
// back: authenticated when that user is on and needs no password.
func (c *client) initACL() {
	c.acl.name.Store(acl.DefaultUser)
	c.refreshUsers(c.s.users())
	c.acl.authed = c.acl.open
}

// settleACL runs before an early connection's first command: once the
// users are settled, the connection takes the default user afresh, as if
// it had just connected (nothing ran before to authenticate it).
func (c *client) settleACL() {
	c.acl.early = false
	c.s.awaitACLSettled()
	c.initACL()
}

// refreshUsers resolves the connection's user in us. A user that no
// longer exists closes the connection, as Redis closes the connections of
// a deleted user.
func (c *client) refreshUsers(us *acl.Users) {
	c.acl.users = us
	def := us.Default()
	c.acl.open = def.Enabled() && def.NoPass()
	u := us.Get(c.acl.name.Load())
	if u == nil {
		c.kill()
		u = def
	}
	c.acl.user = u
}

// authRequired reports whether the connection must AUTH first.
func (c *client) authRequired() bool { return !c.acl.open && !c.acl.authed }

// userName returns the connection's user name (any goroutine).
func (c *client) userName() string { return c.acl.name.Load() }

// kill marks the connection to close once the command it runs (if any)
// has answered, and wakes its goroutine if it waits for input.
func (c *client) kill() {
	if c.acl.killed.Swap(true) {
		return
	}
	if nc := c.conn.NetConn(); nc != nil {
		nc.SetReadDeadline(time.Now())
		if fc, ok := nc.(*framedConn); ok {
			fc.wakeLoop()
		}
	}
}

func (c *client) isKilled() bool { return c.acl.killed.Load() }

// authenticate checks a user and password. A failure is logged (object:
// the command as sent, AUTH or HELLO) and answered WRONGPASS.
func (c *client) authenticate(cmd, user, pass []byte) error {
	us := c.s.users()
	if us != c.acl.users {
		c.refreshUsers(us)
	}
	u := us.Get(string(user))
	if u == nil || !u.CheckPassword(pass) {
		c.logDenial(acl.DeniedAuth, string(cmd), string(user))
		return errWrongPass
	}
	c.acl.user = u
	c.acl.name.Store(u.Name())
	c.acl.authed = true
	return nil
}

// permit checks the connection's user may run argv (the command spec;
// the subcommand's metadata for a container). A denial is logged and
// answered as Redis answers it; permit then returns false.
func (c *client) permit(spec *command.Spec, argv [][]byte) bool {
	m := command.MetaFor(spec.Meta, argv)
	reason, pos := c.acl.user.Check(m, argv, &c.acl.keys)
	if reason == acl.Allowed {
		return true
	}
	c.logDenial(reason, denialObject(reason, m, argv, pos), "")
	c.reject(spec, command.Errorf("NOPERM %s", acl.DenialMessage(reason, c.acl.user.Name(), m.Name, string(argv[pos]), false)))
	return false
}

// denialObject is what the ACL log records of a denial.
func denialObject(reason acl.Reason, m *command.Meta, argv [][]byte, pos int) string {
	if reason == acl.DeniedCommand {
		return m.Name
	}
	return string(argv[pos])
}

// logDenial records a denial in the ACL log, for user ("" for the
// connection's own).
func (c *client) logDenial(reason acl.Reason, object, user string) {
	if user == "" {
		user = c.acl.user.Name()
	}
	ctx := acl.TopLevel
	if c.multi != nil || c.acl.execing {
		ctx = acl.Multi
	}
	c.s.acl.log.Add(reason, ctx, object, user, c.info(), time.Now().UnixMilli())
}

// checkQueued checks, at EXEC, a command queued in the transaction, as
// Redis checks them again then: it returns the error that replaces the
// command's reply when it is no longer allowed, nil otherwise.
func (c *client) checkQueued(m *command.Meta, argv [][]byte) error {
	if m == nil || c.acl.user.Unrestricted() {
		return nil
	}
	reason, pos := c.acl.user.Check(m, argv, &c.acl.keys)
	if reason == acl.Allowed {
		return nil
	}
	c.s.acl.log.Add(reason, acl.Multi, denialObject(reason, m, argv, pos), c.acl.user.Name(), c.info(), time.Now().UnixMilli())
	why := "no permission"
	switch reason {
	case acl.DeniedCommand:
		why = "no permission to execute the command or subcommand"
	case acl.DeniedKey:
		why = "no permission to touch the specified keys"
	case acl.DeniedChannel:
		why = "no permission to access one of the channels used as arguments"
	}
	return command.Errorf("NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: %s", why)
}

// atomicString and atomicBool hold what other goroutines read.
type atomicString struct{ p atomic.Pointer[string] }

func (a *atomicString) Store(s string) { a.p.Store(&s) }

func (a *atomicString) Load() string {
	if p := a.p.Load(); p != nil {
		return *p
	}
	return ""
}

type atomicBool = atomic.Bool

// permitAgain checks a blocked command again before it runs again: the
// user's permissions may have changed, or the user may be gone (the
// connection then closes without a reply).
func (c *client) permitAgain(spec *command.Spec, argv [][]byte) bool {
	if us := c.s.users(); us != c.acl.users {
		c.refreshUsers(us)
	}
	if c.isKilled() {
		return false
	}
	if c.acl.user.Unrestricted() {
		return true
	}
	return c.permit(spec, argv)
}
