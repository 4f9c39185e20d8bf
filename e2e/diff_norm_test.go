package e2e

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Normalization of replies the differential test cannot compare byte for
// byte because Redis itself does not decide them: KEYS and SCAN order,
// ZRANDMEMBER and RANDOMKEY choices, OBJECT ENCODING's names, memory
// sizes, idle times and the milliseconds a TTL has run down.

// value is a parsed RESP2/RESP3 reply.
type value struct {
	typ   byte   // the RESP type byte
	str   string // the line or bulk payload
	null  bool   // $-1 or *-1
	elems []*value
}

// parseValue parses one reply from b and returns it with the rest of b.
func parseValue(b []byte) (*value, []byte, error) {
	i := bytes.Index(b, []byte("\r\n"))
	if i < 1 {
		return nil, nil, fmt.Errorf("truncated reply %q", b)
	}
	v := &value{typ: b[0], str: string(b[1:i])}
	rest := b[i+2:]
	if !strings.ContainsRune("$=!*~>%|", rune(v.typ)) {
		return v, rest, nil
	}
	n, err := strconv.Atoi(v.str)
	if err != nil {
		return nil, nil, err
	}
	if n < 0 {
		v.null = true
		return v, rest, nil
	}
	switch v.typ {
	case '$', '=', '!':
		if len(rest) < n+2 {
			return nil, nil, fmt.Errorf("truncated bulk")
		}
		v.str = string(rest[:n])
		return v, rest[n+2:], nil
	case '%', '|':
		n *= 2
	}
	for j := 0; j < n; j++ {
		var e *value
		if e, rest, err = parseValue(rest); err != nil {
			return nil, nil, err
		}
		v.elems = append(v.elems, e)
	}
	return v, rest, nil
}

func mustParse(b []byte) *value {
	v, _, err := parseValue(b)
	if err != nil {
		return &value{typ: '?', str: string(b)}
	}
	return v
}

// encode writes v back as RESP (lengths re-measured).
func (v *value) encode(out *bytes.Buffer) {
	out.WriteByte(v.typ)
	switch {
	case v.null:
		out.WriteString("-1\r\n")
	case v.typ == '$' || v.typ == '=' || v.typ == '!':
		fmt.Fprintf(out, "%d\r\n%s\r\n", len(v.str), v.str)
	case v.typ == '*' || v.typ == '~' || v.typ == '>' || v.typ == '%' || v.typ == '|':
		n := len(v.elems)
		if v.typ == '%' || v.typ == '|' {
			n /= 2
		}
		fmt.Fprintf(out, "%d\r\n", n)
		for _, e := range v.elems {
			e.encode(out)
		}
	default:
		out.WriteString(v.str)
		out.WriteString("\r\n")
	}
}

func (v *value) bytes() []byte {
	var b bytes.Buffer
	v.encode(&b)
	return b.Bytes()
}

func (v *value) isArray() bool { return v.typ == '*' && !v.null }

func (v *value) isNull() bool { return v.typ == '_' || v.null }

func (v *value) int() (int64, bool) {
	if v.typ != ':' {
		return 0, false
	}
	n, err := strconv.ParseInt(v.str, 10, 64)
	return n, err == nil
}

// sortElems sorts an array's elements by their encoding (a set compare).
func (v *value) sortElems() {
	sort.Slice(v.elems, func(i, j int) bool { return string(v.elems[i].bytes()) < string(v.elems[j].bytes()) })
}

// normalize rewrites a reply to argv so that equal meanings compare equal.
// It is applied to both servers' replies alike.
func normalize(argv []string, v *value) {
	if v.typ == '-' {
		return
	}
	unsignZero(v)
	switch strings.ToUpper(argv[0]) {
	case "KEYS":
		v.sortElems()
	case "OBJECT", "MEMORY":
		// Redis 7.0 wrote "Prints this help."; 7.2 writes "Print".
		if len(argv) == 2 && strings.EqualFold(argv[1], "HELP") && len(v.elems) > 0 {
			if last := v.elems[len(v.elems)-1]; last.str == "    Prints this help." {
				last.str = "    Print this help."
			}
		}
	}
	switch strings.ToUpper(argv[0]) {
	case "OBJECT":
		if len(argv) > 1 && !v.isNull() {
			switch strings.ToUpper(argv[1]) {
			case "ENCODING":
				v.str = "<encoding>"
			case "IDLETIME":
				v.str = "<idle>"
			}
		}
	case "MEMORY":
		if v.typ == ':' {
			v.str = "<bytes>"
		}
	case "DUMP":
		normalizeDump(v)
	}
}

// unsignZero writes every score "-0" as "0". Redis keeps a zero score's
// sign in big sets (skiplist) but loses it in small ones (a listpack
// stores "-0" as the integer 0); Goblin keeps it always. Orders and
// comparisons do not see the sign, so only the text can differ.
func unsignZero(v *value) {
	if (v.typ == '$' || v.typ == ',') && v.str == "-0" {
		v.str = "0"
	}
	for _, e := range v.elems {
		unsignZero(e)
	}
}

// ttlClose reports whether two TTL-family replies agree up to the time
// that passed between the servers' answers.
func ttlClose(name string, a, b *value) bool {
	x, ok1 := a.int()
	y, ok2 := b.int()
	if !ok1 || !ok2 {
		return bytes.Equal(a.bytes(), b.bytes())
	}
	if x < 0 || y < 0 {
		return x == y
	}
	tol := int64(2)
	if strings.HasPrefix(strings.ToUpper(name), "P") {
		tol = 2000
	}
	d := x - y
	return d >= -tol && d <= tol
}

func isTTLCommand(name string) bool {
	switch strings.ToUpper(name) {
	case "TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME":
		return true
	}
	return false
}
