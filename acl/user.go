package acl

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"

	"github.com/goblindb/goblin/command"
)

// DefaultUser is the name of the user every connection starts as.
const DefaultUser = "default"

// User is an ACL user. A User is immutable: SetUser builds a new one.
type User struct {
	name string
	// enabled is "on"; Redis keeps "on" and "off" as two flags of which
	// exactly one is set.
	enabled bool
	nopass  bool
	// skipSanitize is "skip-sanitize-payload" (RESTORE's payload check,
	// which Goblin does not have; kept for the descriptions).
	skipSanitize bool
	passwords    []string    // SHA-256 hex hashes, in the order added
	selectors    []*selector // [0] is the root selector

	// Derived when the user is built.
	unrestricted bool   // the root selector allows every command and key
	desc         string // Describe's result
}

// Name returns the user's name.
func (u *User) Name() string { return u.name }

// Enabled reports whether the user is on.
func (u *User) Enabled() bool { return u.enabled }

// NoPass reports whether any password authenticates the user.
func (u *User) NoPass() bool { return u.nopass }

// Unrestricted reports whether the user may run every command on every
// key, so the permission check can be skipped.
func (u *User) Unrestricted() bool { return u.unrestricted }

// newUser returns a user as Redis creates one: off, no password, a root
// selector that allows nothing.
func newUser(name string) *User {
	return &User{name: name, selectors: []*selector{{root: true}}}
}

// clone returns a deep copy of u, named name, to be changed.
func (u *User) clone(name string) *User {
	c := &User{name: name, enabled: u.enabled, nopass: u.nopass, skipSanitize: u.skipSanitize,
		passwords: append([]string(nil), u.passwords...)}
	c.selectors = make([]*selector, len(u.selectors))
	for i, s := range u.selectors {
		c.selectors[i] = s.clone()
	}
	return c
}

// freeze computes what is derived from the rules; the user is not
// changed after.
func (u *User) freeze() *User {
	root := u.selectors[0]
	u.unrestricted = root.allCommands && root.allKeys
	u.desc = u.describe()
	return u
}

// HashPassword returns the SHA-256 hex form Redis keeps of a password.
func HashPassword(pass []byte) string {
	sum := sha256.Sum256(pass)
	return hex.EncodeToString(sum[:])
}

// validHash reports whether h is 64 lowercase hex digits.
func validHash(h string) bool {
	if len(h) != sha256.Size*2 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if (c < 'a' || c > 'f') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// CheckPassword reports whether pass authenticates u: u is on and either
// nopass or one of its hashes is pass's. Hashes are compared in constant
// time.
func (u *User) CheckPassword(pass []byte) bool {
	if !u.enabled {
		return false
	}
	if u.nopass {
		return true
	}
	sum := sha256.Sum256(pass)
	var hexSum [sha256.Size * 2]byte
	hex.Encode(hexSum[:], sum[:])
	ok := 0
	for _, p := range u.passwords {
		ok |= subtle.ConstantTimeCompare(hexSum[:], []byte(p))
	}
	return ok == 1
}

// Flags returns the user's flags as ACL GETUSER lists them.
func (u *User) Flags() []string {
	var out []string
	if u.enabled {
		out = append(out, "on")
	} else {
		out = append(out, "off")
	}
	if u.nopass {
		out = append(out, "nopass")
	}
	if u.skipSanitize {
		out = append(out, "skip-sanitize-payload")
	} else {
		out = append(out, "sanitize-payload")
	}
	return out
}

// Passwords returns the user's password hashes.
func (u *User) Passwords() []string { return append([]string(nil), u.passwords...) }

// SelectorInfo is a selector as ACL GETUSER describes it.
type SelectorInfo struct {
	Commands string // "+@all -keys", "-@all +get"
	Keys     string // "~*", or the patterns ("~a %R~b"), or ""
	Channels string // "&*", or the patterns ("&a &b"), or ""
}

// Root returns the root selector's description.
func (u *User) Root() SelectorInfo { return u.selectors[0].info() }

// Selectors returns the descriptions of the selectors after the root.
func (u *User) Selectors() []SelectorInfo {
	out := make([]SelectorInfo, 0, len(u.selectors)-1)
	for _, s := range u.selectors[1:] {
		out = append(out, s.info())
	}
	return out
}

// Describe returns the user's rules as ACL LIST and aclfiles write them
// (without "user <name> "): flags, password hashes, then the selectors.
func (u *User) Describe() string { return u.desc }

func (u *User) describe() string {
	var b strings.Builder
	for _, f := range u.Flags() {
		b.WriteString(f)
		b.WriteByte(' ')
	}
	for _, p := range u.passwords {
		b.WriteByte('#')
		b.WriteString(p)
		b.WriteByte(' ')
	}
	for i, s := range u.selectors {
		if i == 0 {
			b.WriteString(s.describe())
		} else {
			b.WriteString(" (")
			b.WriteString(s.describe())
			b.WriteByte(')')
		}
	}
	return b.String()
}

// Line returns the user as an aclfile line and ACL LIST entry:
// "user <name> <rules>".
func (u *User) Line() string { return "user " + u.name + " " + u.desc }

// Check reports whether u may run the command argv, whose metadata m is
// (its subcommand's, for a container: command.MetaFor). On a denial it
// returns the reason and the position in argv of the key it is about (0
// for the command itself). keys is scratch space for the key positions,
// so the check allocates nothing once it has grown.
func (u *User) Check(m *command.Meta, argv [][]byte, keys *[]command.KeyRef) (Reason, int) {
	if u.unrestricted {
		return Allowed, 0
	}
	found := false
	reason, pos := DeniedCommand, 0
	for _, s := range u.selectors {
		r, p := s.check(m, argv, keys, &found)
		if r == Allowed {
			return Allowed, 0
		}
		if r > reason || (r == reason && p > pos) {
			reason, pos = r, p
		}
	}
	return reason, pos
}

// Reason is why a command was denied; the values order them as Redis
// picks the one to report among several selectors.
type Reason uint8

// Reasons.
const (
	Allowed       Reason = 0
	DeniedCommand Reason = 1
	DeniedKey     Reason = 2
	DeniedAuth    Reason = 3
	DeniedChannel Reason = 4
)

func (r Reason) String() string {
	switch r {
	case DeniedCommand:
		return "command"
	case DeniedKey:
		return "key"
	case DeniedChannel:
		return "channel"
	case DeniedAuth:
		return "auth"
	}
	return "unknown"
}

// DenialMessage is the text after "NOPERM " for a command denied for
// reason: the command's full name, or (verbose, as ACL DRYRUN says it)
// the key.
func DenialMessage(reason Reason, user, cmd, arg string, verbose bool) string {
	switch reason {
	case DeniedCommand:
		return "User " + user + " has no permissions to run the '" + cmd + "' command"
	case DeniedKey:
		if verbose {
			return "User " + user + " has no permissions to access the '" + arg + "' key"
		}
		return "No permissions to access a key"
	case DeniedChannel:
		if verbose {
			return "User " + user + " has no permissions to access the '" + arg + "' channel"
		}
		return "No permissions to access a channel"
	}
	return "no permission"
}
