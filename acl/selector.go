package acl

import (
	"strings"

	"github.com/goblindb/goblin/command"
	"github.com/goblindb/goblin/keyspace"
)

// bitmap has a bit per command ID (command.MetaCount is below its size).
type bitmap [8]uint64

func (b *bitmap) has(id int) bool { return b[id>>6]&(1<<(id&63)) != 0 }

func (b *bitmap) set(id int, on bool) {
	if on {
		b[id>>6] |= 1 << (id & 63)
	} else {
		b[id>>6] &^= 1 << (id & 63)
	}
}

// Key permissions of a pattern.
const (
	permRead  = 1
	permWrite = 2
	permAll   = permRead | permWrite
)

type keyPattern struct {
	pattern []byte
	perm    uint8
}

// selector is a set of permissions: commands, keys and channels.
type selector struct {
	root        bool
	allKeys     bool
	allChannels bool
	// allCommands is set by +@all and cleared by any rule that denies a
	// command; future records +@all itself (only -@all clears it): a
	// description then starts with +@all.
	allCommands bool
	future      bool
	cmds        bitmap
	// firstArgs[id] lists the first arguments allowed for command id
	// while its bit is clear (+select|0); nil when there are none.
	firstArgs map[int][]string
	keys      []keyPattern
	channels  []string
	// rules are the command rules in force, lowercase, each with its
	// sign: "+get", "-@hash", "+config|get".
	rules []string
}

func (s *selector) clone() *selector {
	c := *s
	c.keys = append([]keyPattern(nil), s.keys...)
	c.channels = append([]string(nil), s.channels...)
	c.rules = append([]string(nil), s.rules...)
	if s.firstArgs != nil {
		c.firstArgs = make(map[int][]string, len(s.firstArgs))
		for id, args := range s.firstArgs {
			c.firstArgs[id] = append([]string(nil), args...)
		}
	}
	return &c
}

// apply applies one selector rule (the rules valid inside parentheses).
func (s *selector) apply(op string) error {
	if op == "" {
		return ErrSyntax
	}
	switch {
	case eqFold(op, "allkeys"), op == "~*":
		s.allKeys = true
		s.keys = nil
	case eqFold(op, "resetkeys"):
		s.allKeys = false
		s.keys = nil
	case eqFold(op, "allchannels"), op == "&*":
		s.allChannels = true
		s.channels = nil
	case eqFold(op, "resetchannels"):
		s.allChannels = false
		s.channels = nil
	case eqFold(op, "allcommands"), eqFold(op, "+@all"):
		for i := range s.cmds {
			s.cmds[i] = ^uint64(0)
		}
		s.allCommands, s.future = true, true
		s.rules = nil
		s.firstArgs = nil
	case eqFold(op, "nocommands"), eqFold(op, "-@all"):
		s.cmds = bitmap{}
		s.allCommands, s.future = false, false
		s.rules = nil
		s.firstArgs = nil
	case op[0] == '~' || op[0] == '%':
		return s.addKeyPattern(op)
	case op[0] == '&':
		if s.allChannels {
			return ErrChannelAfterAll
		}
		if hasSpace(op[1:]) {
			return ErrSyntax
		}
		p := op[1:]
		found := false
		for _, c := range s.channels {
			if c == p {
				found = true
			}
		}
		if !found {
			s.channels = append(s.channels, p)
		}
		s.allChannels = false
	case op[0] == '+' && (len(op) < 2 || op[1] != '@'):
		return s.allowCommand(op[1:])
	case op[0] == '-' && (len(op) < 2 || op[1] != '@'):
		m := lookupCommand(op[1:])
		if m == nil {
			return ErrUnknownCommand
		}
		s.changePerm(m, false)
		s.updateRules(m.Name, false)
	case op[0] == '+' || op[0] == '-':
		cat := command.CategoryByName(op[2:])
		if cat == 0 {
			return ErrUnknownCommand
		}
		allow := op[0] == '+'
		s.updateRules(op[1:], allow)
		command.AllMeta(func(m *command.Meta) { s.setCategory(m, cat, allow) })
	default:
		return ErrSyntax
	}
	return nil
}

// addKeyPattern adds a ~pattern or %<perms>~pattern rule. A pattern given
// again gains the new permissions.
func (s *selector) addKeyPattern(op string) error {
	if s.allKeys {
		return ErrKeyAfterAll
	}
	perm := uint8(permAll)
	off := 1
	if op[0] == '%' {
		perm = 0
		for ; off < len(op); off++ {
			switch c := op[off]; {
			case (c == 'R' || c == 'r') && perm&permRead == 0:
				perm |= permRead
				continue
			case (c == 'W' || c == 'w') && perm&permWrite == 0:
				perm |= permWrite
				continue
			case c == '~' && perm != 0:
				off++
			default:
				return ErrSyntax
			}
			break
		}
	}
	p := op[off:]
	if hasSpace(p) {
		return ErrSyntax
	}
	for i := range s.keys {
		if string(s.keys[i].pattern) == p {
			s.keys[i].perm |= perm
			s.allKeys = false
			return nil
		}
	}
	s.keys = append(s.keys, keyPattern{pattern: []byte(p), perm: perm})
	s.allKeys = false
	return nil
}

// allowCommand applies +<command>, +<container>|<sub> and the first-arg
// form +<command>|<arg>.
func (s *selector) allowCommand(name string) error {
	bar := strings.LastIndexByte(name, '|')
	if bar < 0 {
		m := lookupCommand(name)
		if m == nil {
			return ErrUnknownCommand
		}
		s.changePerm(m, true)
		s.updateRules(m.Name, true)
		return nil
	}
	m := lookupCommand(name[:bar])
	if m == nil {
		return ErrUnknownCommand
	}
	if m.Parent != nil {
		return ErrSubcommandArg
	}
	sub := name[bar+1:]
	if sub == "" {
		return ErrSyntax
	}
	if len(m.Subs) > 0 {
		sm := lookupCommand(name)
		if sm == nil {
			return ErrUnknownCommand
		}
		s.changePerm(sm, true)
	} else {
		s.addFirstArg(m.ID, sub)
	}
	s.updateRules(name, true)
	return nil
}

// lookupCommand finds a command or a container's subcommand by name, as
// Redis's ACL rules name them: "get", "config|get", any case.
func lookupCommand(name string) *command.Meta {
	parts := strings.Split(name, "|")
	if len(parts) > 2 {
		return nil
	}
	m := command.LookupMeta(parts[0])
	if m == nil || len(parts) == 1 {
		return m
	}
	if len(m.Subs) == 0 {
		return nil
	}
	return m.Sub([]byte(parts[1]))
}

// changePerm allows or denies m and, for a container, its subcommands.
func (s *selector) changePerm(m *command.Meta, allow bool) {
	s.setBit(m.ID, allow)
	delete(s.firstArgs, m.ID)
	for _, sub := range m.Subs {
		s.setBit(sub.ID, allow)
	}
}

func (s *selector) setBit(id int, allow bool) {
	s.cmds.set(id, allow)
	if !allow {
		s.allCommands = false
	}
}

// setCategory allows or denies every command of m's tree in cat.
func (s *selector) setCategory(m *command.Meta, cat command.Category, allow bool) {
	if m.Categories&cat != 0 {
		s.changePerm(m, allow)
	}
	for _, sub := range m.Subs {
		s.setCategory(sub, cat, allow)
	}
}

func (s *selector) addFirstArg(id int, arg string) {
	if s.firstArgs == nil {
		s.firstArgs = map[int][]string{}
	}
	for _, a := range s.firstArgs[id] {
		if eqFold(a, arg) {
			return
		}
	}
	s.firstArgs[id] = append(s.firstArgs[id], arg)
}

// updateRules records a command rule (rule without its sign): it replaces
// an earlier rule for the same command, and the rules for its
// subcommands, and goes last.
func (s *selector) updateRules(rule string, allow bool) {
	rule = strings.ToLower(rule)
	kept := s.rules[:0]
	for _, r := range s.rules {
		old := r[1:]
		if old == rule || (len(old) > len(rule) && old[len(rule)] == '|' && old[:len(rule)] == rule) {
			continue
		}
		kept = append(kept, r)
	}
	sign := "-"
	if allow {
		sign = "+"
	}
	s.rules = append(kept, sign+rule)
}

// check is the selector's part of User.Check. keys are found once, when
// the first selector needs them (*found records it).
func (s *selector) check(m *command.Meta, argv [][]byte, keys *[]command.KeyRef, found *bool) (Reason, int) {
	if !s.allCommands && m.Flags&command.CmdNoAuth == 0 && !s.cmds.has(m.ID) {
		args := s.firstArgs[m.ID]
		idx := 1
		if m.Parent != nil {
			idx = 2
		}
		if len(argv) <= idx || args == nil {
			return DeniedCommand, 0
		}
		ok := false
		for _, a := range args {
			if eqFold(a, string(argv[idx])) {
				ok = true
				break
			}
		}
		if !ok {
			return DeniedCommand, 0
		}
	}
	if s.allKeys || !m.HasKeys() {
		return Allowed, 0
	}
	if !*found {
		*keys = m.KeyRefs(argv, (*keys)[:0])
		*found = true
	}
	for _, k := range *keys {
		if !s.keyAllowed(argv[k.Pos], k.Flags) {
			return DeniedKey, k.Pos
		}
	}
	return Allowed, 0
}

// keyAllowed reports whether a pattern with the permissions flags need
// matches key.
func (s *selector) keyAllowed(key []byte, flags command.KeyFlags) bool {
	var need uint8
	if flags.Reads() {
		need |= permRead
	}
	if flags.Writes() {
		need |= permWrite
	}
	for _, p := range s.keys {
		if p.perm&need == need && keyspace.Match(p.pattern, key, false) {
			return true
		}
	}
	return false
}

// commandRules describes the command permissions: +@all or -@all, then
// the rules in force.
func (s *selector) commandRules() string {
	start := "-@all"
	if s.future {
		start = "+@all"
	}
	if len(s.rules) == 0 {
		return start
	}
	return start + " " + strings.Join(s.rules, " ")
}

func patternString(p keyPattern) string {
	switch p.perm {
	case permRead:
		return "%R~" + string(p.pattern)
	case permWrite:
		return "%W~" + string(p.pattern)
	}
	return "~" + string(p.pattern)
}

func (s *selector) info() SelectorInfo {
	var in SelectorInfo
	in.Commands = s.commandRules()
	if s.allKeys {
		in.Keys = "~*"
	} else {
		parts := make([]string, len(s.keys))
		for i, p := range s.keys {
			parts[i] = patternString(p)
		}
		in.Keys = strings.Join(parts, " ")
	}
	if s.allChannels {
		in.Channels = "&*"
	} else {
		parts := make([]string, len(s.channels))
		for i, c := range s.channels {
			parts[i] = "&" + c
		}
		in.Channels = strings.Join(parts, " ")
	}
	return in
}

// describe is the selector in ACL LIST's form: keys, channels, commands.
func (s *selector) describe() string {
	var b strings.Builder
	if s.allKeys {
		b.WriteString("~* ")
	} else {
		for _, p := range s.keys {
			b.WriteString(patternString(p))
			b.WriteByte(' ')
		}
	}
	if s.allChannels {
		b.WriteString("&* ")
	} else {
		b.WriteString("resetchannels ")
		for _, c := range s.channels {
			b.WriteByte('&')
			b.WriteString(c)
			b.WriteByte(' ')
		}
	}
	b.WriteString(s.commandRules())
	return b.String()
}

// hasSpace reports whether s holds a space (as C's isspace) or a NUL,
// which Redis refuses in names and patterns.
func hasSpace(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\v', '\f', '\r', 0:
			return true
		}
	}
	return false
}

// eqFold reports whether a and b are equal ignoring ASCII case, as C's
// strcasecmp compares.
func eqFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x >= 'A' && x <= 'Z' {
			x += 'a' - 'A'
		}
		if y >= 'A' && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
