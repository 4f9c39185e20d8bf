package keyspace

// Match reports whether s matches the Redis glob pattern: '*' any run, '?'
// one byte, '[...]' a class with ranges, '^' negation and '\' escapes, and
// '\x' the literal x; nocase folds ASCII case. It follows Redis's
// stringmatchlen step for step, including how it treats malformed patterns
// (an unterminated '[' class, a trailing '\').
func Match(pattern, s []byte, nocase bool) bool {
	skip := false
	return globMatch(pattern, s, nocase, &skip)
}

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

func globMatch(p, s []byte, nocase bool, skipLonger *bool) bool {
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
				if globMatch(p[pi+1:], s[si:], nocase, skipLonger) {
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
					start, end, c := p[pi], p[pi+2], s[si]
					if start > end {
						start, end = end, start
					}
					if nocase {
						start, end, c = lower(start), lower(end), lower(c)
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
