package acl

import (
	"strings"

	"github.com/goblindb/goblin/internal/sds"
)

// SetUser returns the user u (nil: a new user named name) with rules
// applied, as ACL SETUSER does: every rule or none. A selector may be
// given in one argument, "(~k* +get)", or spread over several, "(~k*"
// "+get)". u is not changed.
func SetUser(u *User, name string, rules []string) (*User, error) {
	merged, err := mergeSelectors(rules)
	if err != nil {
		return nil, err
	}
	var c *User
	if u != nil {
		c = u.clone(name)
	} else {
		c = newUser(name)
	}
	for _, r := range merged {
		if err := c.apply(r); err != nil {
			return nil, &RuleError{Rule: r, Err: err}
		}
	}
	return c.freeze(), nil
}

// ValidUsername reports whether name is a valid user name: no spaces or
// NUL bytes.
func ValidUsername(name string) bool { return !hasSpace(name) }

// mergeSelectors joins a selector spread over several arguments into one
// "(...)" rule.
func mergeSelectors(rules []string) ([]string, error) {
	var out []string
	open := -1
	var sel strings.Builder
	for i, r := range rules {
		if open < 0 && strings.HasPrefix(r, "(") && !strings.HasSuffix(r, ")") {
			open = i
			sel.Reset()
			sel.WriteString(r)
			continue
		}
		if open >= 0 {
			sel.WriteByte(' ')
			sel.WriteString(r)
			if strings.HasSuffix(r, ")") {
				out = append(out, sel.String())
				open = -1
			}
			continue
		}
		out = append(out, r)
	}
	if open >= 0 {
		return nil, &UnmatchedError{Rule: rules[open]}
	}
	return out, nil
}

// apply applies one rule to u.
func (u *User) apply(op string) error {
	if op == "" {
		return nil
	}
	switch {
	case eqFold(op, "on"):
		u.enabled = true
	case eqFold(op, "off"):
		u.enabled = false
	case eqFold(op, "skip-sanitize-payload"):
		u.skipSanitize = true
	case eqFold(op, "sanitize-payload"):
		u.skipSanitize = false
	case eqFold(op, "nopass"):
		u.nopass = true
		u.passwords = nil
	case eqFold(op, "resetpass"):
		u.nopass = false
		u.passwords = nil
	case op[0] == '>' || op[0] == '#':
		var h string
		if op[0] == '>' {
			h = HashPassword([]byte(op[1:]))
		} else {
			if !validHash(op[1:]) {
				return ErrBadHash
			}
			h = op[1:]
		}
		found := false
		for _, p := range u.passwords {
			if p == h {
				found = true
			}
		}
		if !found {
			u.passwords = append(u.passwords, h)
		}
		u.nopass = false
	case op[0] == '<' || op[0] == '!':
		var h string
		if op[0] == '<' {
			h = HashPassword([]byte(op[1:]))
		} else {
			if !validHash(op[1:]) {
				return ErrBadHash
			}
			h = op[1:]
		}
		for i, p := range u.passwords {
			if p == h {
				u.passwords = append(u.passwords[:i:i], u.passwords[i+1:]...)
				return nil
			}
		}
		return ErrNoSuchPassword
	case op[0] == '(' && op[len(op)-1] == ')':
		s := &selector{}
		for _, r := range splitArgs(op[1 : len(op)-1]) {
			if err := s.apply(r); err != nil {
				return err
			}
		}
		u.selectors = append(u.selectors, s)
	case eqFold(op, "clearselectors"):
		u.selectors = u.selectors[:1:1]
	case eqFold(op, "reset"):
		u.nopass, u.passwords = false, nil
		root := u.selectors[0]
		root.apply("resetkeys")
		root.apply("resetchannels")
		u.enabled = false
		u.skipSanitize = false
		u.selectors = u.selectors[:1:1]
		root.apply("-@all")
	default:
		return u.selectors[0].apply(op)
	}
	return nil
}

// HashRules returns rules with every password given in clear (>pass,
// <pass) replaced by its hash (#hash, !hash), which has the same effect:
// what a node proposes to the replicated log carries no password in
// clear.
func HashRules(rules []string) []string {
	out := make([]string, len(rules))
	for i, r := range rules {
		switch {
		case strings.HasPrefix(r, ">"):
			out[i] = "#" + HashPassword([]byte(r[1:]))
		case strings.HasPrefix(r, "<"):
			out[i] = "!" + HashPassword([]byte(r[1:]))
		default:
			out[i] = r
		}
	}
	return out
}

// splitArgs splits a selector's inside into rules as Redis does, with
// sdssplitargs; unbalanced quotes give no rules at all.
func splitArgs(line string) []string {
	args, ok := sds.SplitArgs([]byte(line))
	if !ok {
		return nil
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = string(a)
	}
	return out
}
