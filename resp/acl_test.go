package resp

import (
	"github.com/goblindb/goblin/acl"
)

// The fake backend's state machine keeps the replicated users.
func (f *fakeBackend) ACLUsers() *acl.Users               { return f.a.ACLUsers() }
func (f *fakeBackend) ACLConfigDigest(node string) string { return f.a.ACLConfigDigest(node) }
func (f *fakeBackend) OnACLChange(fn func(*acl.Users, []string)) {
	f.a.OnACLChange(fn)
}
