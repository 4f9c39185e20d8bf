package acl

import "sort"

// Users is a set of users, always with a default user. It is immutable:
// the methods that change it return a new set.
type Users struct {
	byName map[string]*User
	names  []string // sorted, as Redis lists users
}

// NewDefaultUser returns the default user as Redis creates it: on, nopass,
// every key, channel and command.
func NewDefaultUser() *User {
	u, err := SetUser(nil, DefaultUser, []string{"+@all", "~*", "&*", "on", "nopass"})
	if err != nil {
		panic(err)
	}
	return u
}

// NewUsers returns a set holding only Redis's default user.
func NewUsers() *Users { return (&Users{}).With(NewDefaultUser()) }

// Get returns the user named name (case-sensitive), or nil.
func (us *Users) Get(name string) *User {
	if us == nil {
		return nil
	}
	return us.byName[name]
}

// Default returns the default user.
func (us *Users) Default() *User { return us.byName[DefaultUser] }

// Names returns the user names, sorted.
func (us *Users) Names() []string { return append([]string(nil), us.names...) }

// All returns the users sorted by name.
func (us *Users) All() []*User {
	out := make([]*User, len(us.names))
	for i, n := range us.names {
		out[i] = us.byName[n]
	}
	return out
}

// Len returns the number of users.
func (us *Users) Len() int { return len(us.names) }

// With returns a set with u added, replacing a user of the same name.
func (us *Users) With(u *User) *Users {
	c := &Users{byName: make(map[string]*User, len(us.byName)+1)}
	for n, x := range us.byName {
		c.byName[n] = x
	}
	c.byName[u.name] = u
	c.sortNames()
	return c
}

// Without returns a set without the named users, and how many of them
// existed. The default user cannot be removed (ErrDeleteDefault).
func (us *Users) Without(names []string) (*Users, int, error) {
	for _, n := range names {
		if n == DefaultUser {
			return nil, 0, ErrDeleteDefault
		}
	}
	c := &Users{byName: make(map[string]*User, len(us.byName))}
	for n, x := range us.byName {
		c.byName[n] = x
	}
	deleted := 0
	for _, n := range names {
		if _, ok := c.byName[n]; ok {
			delete(c.byName, n)
			deleted++
		}
	}
	c.sortNames()
	return c, deleted, nil
}

// NewUsersFrom returns a set of the given users, adding Redis's default
// user when none of them is named default.
func NewUsersFrom(users []*User) *Users {
	c := &Users{byName: make(map[string]*User, len(users)+1)}
	for _, u := range users {
		c.byName[u.name] = u
	}
	if c.byName[DefaultUser] == nil {
		c.byName[DefaultUser] = NewDefaultUser()
	}
	c.sortNames()
	return c
}

func (us *Users) sortNames() {
	us.names = us.names[:0]
	for n := range us.byName {
		us.names = append(us.names, n)
	}
	sort.Strings(us.names)
}

// State returns every user in the exact form Restore rebuilds them
// from: what a snapshot stores.
func (us *Users) State() []UserState {
	out := make([]UserState, 0, len(us.names))
	for _, n := range us.names {
		out = append(out, us.byName[n].state())
	}
	return out
}

// UserState is a user as the rules that rebuild it from a new user: Rules
// (flags, password hashes, the root selector's rules), then each further
// selector's rules, applied to an empty selector one by one (no quoting
// or parenthesis parsing, so any pattern comes back as it was).
type UserState struct {
	Name      string
	Rules     []string
	Selectors [][]string
}

func (u *User) state() UserState {
	st := UserState{Name: u.name, Rules: u.Flags()}
	for _, p := range u.passwords {
		st.Rules = append(st.Rules, "#"+p)
	}
	st.Rules = append(st.Rules, u.selectors[0].state()...)
	for _, s := range u.selectors[1:] {
		st.Selectors = append(st.Selectors, s.state())
	}
	return st
}

// state returns the rules that rebuild s from an empty selector.
func (s *selector) state() []string {
	var out []string
	if s.allKeys {
		out = append(out, "allkeys")
	}
	for _, p := range s.keys {
		if p.perm == permAll && string(p.pattern) == "*" {
			out = append(out, "%RW~*") // "~*" would mean allkeys
			continue
		}
		out = append(out, patternString(p))
	}
	if s.allChannels {
		out = append(out, "allchannels")
	}
	for _, c := range s.channels {
		out = append(out, "&"+c)
	}
	if s.future {
		out = append(out, "+@all")
	} else {
		out = append(out, "-@all")
	}
	return append(out, s.rules...)
}

// Restore rebuilds users from their states, with the default user added
// when missing.
func Restore(states []UserState) (*Users, error) {
	users := make([]*User, 0, len(states))
	for _, st := range states {
		u := newUser(st.Name)
		for _, r := range st.Rules {
			if err := u.apply(r); err != nil {
				return nil, &RuleError{Rule: r, Err: err}
			}
		}
		for _, rules := range st.Selectors {
			sel := &selector{}
			for _, r := range rules {
				if err := sel.apply(r); err != nil {
					return nil, &RuleError{Rule: r, Err: err}
				}
			}
			u.selectors = append(u.selectors, sel)
		}
		users = append(users, u.freeze())
	}
	return NewUsersFrom(users), nil
}
