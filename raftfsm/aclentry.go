package raftfsm

import (
	"encoding/binary"
	"fmt"

	"github.com/goblindb/goblin/acl"
)

// ACL entries (OpACL): every change to the ACL users goes through the log,
// so every node enforces the same users.
//
// Passwords never travel in clear: the proposing node turns >pass and
// <pass rules into #hash and !hash (acl.HashRules) before proposing.

// ACLKind is what an OpACL entry does. Values are part of the log format:
// never renumber.
type ACLKind uint8

// ACL entry kinds.
const (
	// ACLSetUser applies Users[0]'s rules to that user (ACL SETUSER; CONFIG
	// SET requirepass is a SETUSER of the default user), creating it if
	// missing; all rules or none.
	ACLSetUser ACLKind = 1 + iota
	// ACLDelUser deletes the users named in Users (ACL DELUSER).
	ACLDelUser
	// ACLLoad replaces every user with Users (ACL LOAD, from an aclfile),
	// adding the default user when Users has none.
	ACLLoad
	// ACLConfig is node Node's operator configuration (--requirepass,
	// --aclfile), applied unless the state already applied the
	// configuration with this Digest from this node: with Replace, Users
	// replace every user, as ACLLoad; without, each is set as ACLSetUser.
	// With no Users it only records Digest.
	ACLConfig
)

func (k ACLKind) String() string {
	switch k {
	case ACLSetUser:
		return "setuser"
	case ACLDelUser:
		return "deluser"
	case ACLLoad:
		return "load"
	case ACLConfig:
		return "config"
	}
	return fmt.Sprintf("aclkind(%d)", uint8(k))
}

// ACLUser is a user name and rules in an ACL entry.
type ACLUser struct {
	Name  string
	Rules []string
}

// ACLChange is the payload of an OpACL entry.
type ACLChange struct {
	Kind  ACLKind
	Users []ACLUser
	// Node and Digest: for ACLConfig, the configuration's node and digest;
	// ACLLoad records them too when Node is set (a node that loads its own
	// aclfile does not apply it again at its next start).
	Node    string
	Digest  string
	Replace bool
	// Init, when set, is the proposing node's operator configuration (an
	// ACLConfig), applied first if the state has no users yet: a change
	// proposed before the node's configuration reached the log builds on
	// that configuration, never on an open default user.
	Init *ACLChange
}

// Limits an ACL entry must respect (Validate).
const (
	maxACLUsers = 1 << 16
	maxACLRules = 1 << 16
)

const (
	aclFlagReplace = 1 << 0
	aclFlagInit    = 1 << 1
)

func (c *ACLChange) encode(dst []byte) []byte {
	var flags byte
	if c.Replace {
		flags |= aclFlagReplace
	}
	if c.Init != nil {
		flags |= aclFlagInit
	}
	dst = append(dst, byte(c.Kind), flags)
	dst = appendBytes(dst, []byte(c.Node))
	dst = appendBytes(dst, []byte(c.Digest))
	dst = binary.AppendUvarint(dst, uint64(len(c.Users)))
	for _, u := range c.Users {
		dst = appendBytes(dst, []byte(u.Name))
		dst = binary.AppendUvarint(dst, uint64(len(u.Rules)))
		for _, r := range u.Rules {
			dst = appendBytes(dst, []byte(r))
		}
	}
	if c.Init != nil {
		dst = c.Init.encode(dst)
	}
	return dst
}

func decodeACL(d *decoder, nested bool) *ACLChange {
	c := &ACLChange{Kind: ACLKind(d.byte())}
	flags := d.byte()
	if flags&^(aclFlagReplace|aclFlagInit) != 0 || (nested && flags&aclFlagInit != 0) {
		d.fail()
		return c
	}
	c.Replace = flags&aclFlagReplace != 0
	c.Node = string(d.bytes())
	c.Digest = string(d.bytes())
	n := d.count(2)
	c.Users = make([]ACLUser, n)
	for i := range c.Users {
		c.Users[i].Name = string(d.bytes())
		m := d.count(1)
		c.Users[i].Rules = make([]string, m)
		for j := range c.Users[i].Rules {
			c.Users[i].Rules[j] = string(d.bytes())
		}
	}
	if flags&aclFlagInit != 0 {
		c.Init = decodeACL(d, true)
	}
	return c
}

// ValidateACL checks an ACL entry's shape before it is proposed (a
// forwarded one on the leader): a known kind with the users it needs,
// valid names, bounded sizes, and an Init that is an operator
// configuration. Rules themselves are checked when applied: a rule that
// fails makes the entry answer an error and change nothing.
func ValidateACL(c *ACLChange) error {
	if c == nil {
		return fmt.Errorf("%w: ACL entry without a change", ErrCorrupt)
	}
	if err := validateACL(c); err != nil {
		return err
	}
	if c.Init != nil {
		if c.Init.Kind != ACLConfig || c.Init.Init != nil {
			return fmt.Errorf("%w: ACL entry's initial configuration is a %s", ErrCorrupt, c.Init.Kind)
		}
		return validateACL(c.Init)
	}
	return nil
}

func validateACL(c *ACLChange) error {
	bad := func(why string) error { return fmt.Errorf("%w: ACL %s entry: %s", ErrCorrupt, c.Kind, why) }
	switch c.Kind {
	case ACLSetUser:
		if len(c.Users) != 1 {
			return bad("not one user")
		}
	case ACLDelUser:
		if len(c.Users) == 0 {
			return bad("no user")
		}
	case ACLLoad, ACLConfig:
	default:
		return bad("unknown kind")
	}
	if len(c.Users) > maxACLUsers {
		return bad("too many users")
	}
	for _, u := range c.Users {
		if !acl.ValidUsername(u.Name) {
			return bad("invalid user name")
		}
		if len(u.Rules) > maxACLRules {
			return bad("too many rules")
		}
	}
	return nil
}
