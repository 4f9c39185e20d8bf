// Package sds holds the string routines of Redis's sds library that
// Goblin needs to follow byte for byte: SplitArgs, which Redis uses for
// inline commands, ACL selectors and aclfile lines.
package sds

import "bytes"

// SplitArgs is Redis's sdssplitargs over a C string: blanks separate
// arguments, "double quotes" take \xHH and \n \r \t \b \a escapes,
// 'single quotes' take \', and a closing quote must end its argument.
// ok is false for unbalanced quotes.
func SplitArgs(line []byte) ([][]byte, bool) {
	line = cstrBytes(line)
	var args [][]byte
	p := 0
	at := func(i int) byte {
		if i < len(line) {
			return line[i]
		}
		return 0
	}
	for {
		for p < len(line) && isSpace(line[p]) {
			p++
		}
		if p >= len(line) {
			return args, true
		}
		cur := []byte{}
		var quote byte // the open quote, 0 outside quotes
		for done := false; !done; {
			c := at(p)
			switch {
			case quote == 0:
				switch c {
				case ' ', '\n', '\r', '\t', 0:
					done = true
				case '"', '\'':
					quote = c
				default:
					cur = append(cur, c)
				}
			case quote == '"' && c == '\\' && at(p+1) == 'x' && isHexDigit(at(p+2)) && isHexDigit(at(p+3)):
				cur = append(cur, hexVal(at(p+2))<<4|hexVal(at(p+3)))
				p += 3
			case quote == '"' && c == '\\' && at(p+1) != 0:
				p++
				cur = append(cur, unescape(at(p)))
			case quote == '\'' && c == '\\' && at(p+1) == '\'':
				p++
				cur = append(cur, '\'')
			case c == quote:
				if !argEnds(at(p + 1)) {
					return nil, false
				}
				done = true
			case c == 0:
				return nil, false // unterminated quotes
			default:
				cur = append(cur, c)
			}
			if at(p) != 0 {
				p++
			}
		}
		args = append(args, cur)
	}
}

// unescape maps the letter after a backslash in double quotes.
func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return c
}

// argEnds reports whether c may follow a closing quote: the end of the
// line or a blank.
func argEnds(c byte) bool { return c == 0 || isSpace(c) }

func cstrBytes(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isHexDigit(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
