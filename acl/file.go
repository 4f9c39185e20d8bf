package acl

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// The aclfile format: one user per line, "user <name> <rule> ...", rules
// separated by single spaces, blank lines allowed, no comments (a file is
// meant to be rewritten by ACL SAVE). A selector may be spread over
// several rules, as in ACL SETUSER.

// FileUser is a user read from an aclfile: its name and its rules, with
// selectors merged into one rule each.
type FileUser struct {
	Name  string
	Rules []string
}

// LoadError lists everything wrong in an aclfile, in Redis's words, on
// one line.
type LoadError struct{ Msg string }

func (e *LoadError) Error() string { return e.Msg }

// ParseFile reads an aclfile as ACL LOAD does: every line is checked, and
// any error refuses the whole file. filename names the file in errors.
// It returns the users in file order and the set they make (with the
// default user added when the file has none).
func ParseFile(filename string, data []byte) ([]FileUser, *Users, error) {
	var errs strings.Builder
	var users []FileUser
	var built []*User
	seen := map[string]bool{}
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		line = strings.Trim(line, " \t\r\n")
		if line == "" {
			continue
		}
		argv := strings.Split(line, " ")
		if argv[0] != "user" || len(argv) < 2 {
			fmt.Fprintf(&errs, "%s:%d should start with user keyword followed by the username. ", filename, n)
			continue
		}
		name := argv[1]
		if hasSpace(name) {
			fmt.Fprintf(&errs, "'%s:%d: username '%s' contains invalid characters. ", filename, n, name)
			continue
		}
		if seen[name] {
			fmt.Fprintf(&errs, "WARNING: Duplicate user '%s' found on line %d. ", name, n)
			continue
		}
		seen[name] = true
		rules, err := mergeSelectors(argv[2:])
		if err != nil {
			fmt.Fprintf(&errs, "%s:%d: Unmatched parenthesis in selector definition.", filename, n)
		}
		u := newUser(name)
		syntaxErr := false
		for j, r := range rules {
			r = strings.Trim(r, "\t\r\n")
			rules[j] = r
			if err := u.apply(r); err != nil {
				switch {
				case errors.Is(err, ErrUnknownCommand):
					fmt.Fprintf(&errs, "%s:%d: Error in applying operation '%s': %s. ", filename, n, r, err)
				case !syntaxErr:
					fmt.Fprintf(&errs, "%s:%d: %s. ", filename, n, err)
					syntaxErr = true
				}
			}
		}
		users = append(users, FileUser{Name: name, Rules: rules})
		built = append(built, u.freeze())
	}
	if errs.Len() > 0 {
		errs.WriteString("WARNING: ACL errors detected, no change to the previously active ACL rules was performed")
		return nil, nil, &LoadError{Msg: errs.String()}
	}
	return users, NewUsersFrom(built), nil
}

// FileContent returns users in the aclfile format, as ACL SAVE writes it.
func FileContent(us *Users) []byte {
	var b strings.Builder
	for _, u := range us.All() {
		b.WriteString(u.Line())
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// OpenError is the error ACL LOAD gives when the file cannot be read:
// the system's reason, worded as C's strerror words it.
func OpenError(filename string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	msg := err.Error()
	if msg != "" {
		msg = strings.ToUpper(msg[:1]) + msg[1:]
	}
	return &LoadError{Msg: fmt.Sprintf("Error loading ACLs, opening file '%s': %s", filename, msg)}
}
