package command

// KeyRef is a key argument found by a key spec: its position in argv and
// the spec's flags (whether the command reads it, writes it, or both).
type KeyRef struct {
	Pos   int
	Flags KeyFlags
}

// KeyRefs appends to dst the key arguments of argv that m's key specs
// name, in spec order, as Redis finds them for ACL checks. When a spec
// cannot be applied (a count that is not a number, keys past the end)
// it returns dst unchanged: Redis's fallbacks find no keys in the
// commands Goblin serves then, and the command itself answers with a
// syntax error.
func (m *Meta) KeyRefs(argv [][]byte, dst []KeyRef) []KeyRef {
	start := len(dst)
	argc := len(argv)
	for _, ks := range m.KeySpecs {
		if ks.Flags&KeyNotKey != 0 {
			continue
		}
		first := 0
		switch {
		case ks.Begin.Index > 0:
			first = ks.Begin.Index
		case ks.Begin.Keyword != "":
			from, end, step := ks.Begin.StartFrom, argc-1, 1
			if from <= 0 {
				from, end, step = argc+from, 1, -1
			}
			for i := from; i != end; i += step {
				if i >= argc || i < 1 {
					break
				}
				if eqFold(argv[i], ks.Begin.Keyword) {
					first = i + 1
					break
				}
			}
			if first == 0 {
				continue // keyword absent: no keys from this spec
			}
		default:
			return dst[:start]
		}
		var last, step int
		switch {
		case ks.Find.Range:
			step = ks.Find.KeyStep
			switch {
			case ks.Find.LastKey >= 0:
				last = first + ks.Find.LastKey
			case ks.Find.Limit == 0:
				last = argc + ks.Find.LastKey
			default:
				last = first + ((argc-first)/ks.Find.Limit + ks.Find.LastKey)
			}
		case ks.Find.KeyNum:
			step = ks.Find.KeyStep
			at := first + ks.Find.NumIdx
			if at >= argc {
				return dst[:start]
			}
			n, ok := ParseInt(argv[at])
			if !ok || n < 0 || n > int64(argc) {
				return dst[:start]
			}
			first += ks.Find.First
			last = first + int(n) - 1
		default:
			return dst[:start]
		}
		if last >= argc || last < first || first >= argc || step < 1 {
			return dst[:start]
		}
		for i := first; i <= last; i += step {
			dst = append(dst, KeyRef{Pos: i, Flags: ks.Flags})
		}
		if ks.Flags&KeyIncomplete != 0 {
			return dst[:start]
		}
	}
	return dst
}

// eqFold reports whether arg equals w, ignoring ASCII case.
func eqFold(arg []byte, w string) bool {
	if len(arg) != len(w) {
		return false
	}
	for i := 0; i < len(w); i++ {
		a, b := arg[i], w[i]
		if a >= 'A' && a <= 'Z' {
			a += 'a' - 'A'
		}
		if b >= 'A' && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}
