package keyspace

// Match reports whether s matches the Redis glob pattern: '*' any run, '?'
// one byte, '[...]' a class with ranges, '^' negation and '\' escapes, and
// '\x' the literal x; nocase folds ASCII case. It follows Redis's
// stringmatchlen step for step, including how it treats malformed patterns
// (an unterminated '[' class, a trailing '\'), the bounds of a range
// compared as C's signed char (a byte of 0x80 or more sorts below 0), and
// Redis's guard against abusive patterns: more than maxGlobNesting stars
// deep, nothing matches.
func Match(pattern, s []byte, nocase bool) bool {
	skip := false
	return globMatch(pattern, s, nocase, &skip, 0)
}

// maxGlobNesting is how many stars deep a match may recurse.
const maxGlobNesting = 1000

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// at returns b[i], or 0 past the end, as reading a C string's terminator.
func at(b []byte, i int) byte {
	if i >= 0 && i < len(b) {
		return b[i]
	}
	return 0
}

func globMatch(p, s []byte, nocase bool, skipLonger *bool, nesting int) bool {
	if nesting > maxGlobNesting {
		return false
	}
	pi, si := 0, 0
	for pi < len(p) && si < len(s) {
		switch p[pi] {
		case '*':
			for pi < len(p) && at(p, pi+1) == '*' {
				pi++
			}
			if len(p)-pi == 1 {
				return true
			}
			for si < len(s) {
				if globMatch(p[pi+1:], s[si:], nocase, skipLonger, nesting+1) {
					return true
				}
				if *skipLonger {
					return false
				}
				si++
			}
			// No match for the rest of the pattern anywhere in the rest of
			// the string: earlier stars cannot do better either.
			*skipLonger = true
			return false
		case '?':
			si++
		case '[':
			pi++
			not := at(p, pi) == '^'
			if not {
				pi++
			}
			matched := false
			for {
				if at(p, pi) == '\\' && len(p)-pi >= 2 {
					pi++
					if p[pi] == s[si] {
						matched = true
					}
				} else if at(p, pi) == ']' {
					break
				} else if len(p)-pi == 0 {
					pi-- // unterminated class: the step below ends the pattern
					break
				} else if len(p)-pi >= 3 && p[pi+1] == '-' {
					start, end, c := int8(p[pi]), int8(p[pi+2]), int8(s[si])
					if start > end {
						start, end = end, start
					}
					if nocase {
						start, end, c = int8(lower(byte(start))), int8(lower(byte(end))), int8(lower(byte(c)))
					}
					pi += 2
					if c >= start && c <= end {
						matched = true
					}
				} else if nocase {
					if lower(p[pi]) == lower(s[si]) {
						matched = true
					}
				} else if p[pi] == s[si] {
					matched = true
				}
				pi++
			}
			if not {
				matched = !matched
			}
			if !matched {
				return false
			}
			si++
		case '\\':
			if len(p)-pi >= 2 {
				pi++
			}
			fallthrough
		default:
			if nocase {
				if lower(p[pi]) != lower(s[si]) {
					return false
				}
			} else if p[pi] != s[si] {
				return false
			}
			si++
		}
		pi++
		if si == len(s) {
			for at(p, pi) == '*' {
				pi++
			}
			break
		}
	}
	return pi >= len(p) && si == len(s)
}
