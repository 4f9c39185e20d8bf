package command

import "bytes"

// OBJECT and MEMORY: what Goblin knows about a key's value.
//
// OBJECT ENCODING names Goblin's own layouts: "standard" for a set of
// binary-safe members, or the packed layout ("int32:float32", ...). Goblin
// tracks neither access times nor access frequencies: IDLETIME is always
// 0 and FREQ answers as Redis does when no LFU policy is selected.
// REFCOUNT is 1, as for any Redis sorted set.

func init() {
	register(
		&Spec{Name: "object", Flags: ReadOnly, Run: runObject,
			Sub: map[string]int{"encoding": 3, "freq": 3, "idletime": 3, "refcount": 3, "help": 2}},
		&Spec{Name: "memory", Flags: ReadOnly, Run: runMemory,
			Sub: map[string]int{"usage": -3, "help": 2}},
	)
}

var errNoLFU = &Error{"ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."}

// WriteHelp writes a container command's HELP reply as Redis does: a
// header naming the command as the client typed it, the lines, and the
// HELP footer.
func WriteHelp(w *Writer, name []byte, lines []string) {
	w.Array(len(lines) + 3)
	w.Simple(string(bytes.ToUpper(name)) + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
	for _, l := range lines {
		w.Simple(l)
	}
	w.Simple("HELP")
	w.Simple("    Print this help.")
}

func runObject(c *Ctx, argv [][]byte) {
	if err := lookupSpec("object").CheckSub(argv); err != nil {
		c.W.Error(err)
		return
	}
	sub := argv[1]
	if eq(sub, "help") {
		WriteHelp(c.W, argv[0], []string{
			"ENCODING <key>",
			"    Return the kind of internal representation used in order to store the value",
			"    associated with a <key>.",
			"FREQ <key>",
			"    Return the access frequency index of the <key>. The returned integer is",
			"    proportional to the logarithm of the recent access frequency of the key.",
			"IDLETIME <key>",
			"    Return the idle time of the <key>, that is the approximated number of",
			"    seconds elapsed since the last access to the key.",
			"REFCOUNT <key>",
			"    Return the number of references of the value associated with the specified",
			"    <key>.",
		})
		return
	}
	e := c.lookup(argv[2])
	if e == nil {
		c.W.Null()
		return
	}
	switch {
	case eq(sub, "encoding"):
		c.W.BulkString(e.Z.Layout().String())
	case eq(sub, "refcount"):
		c.W.Int(1)
	case eq(sub, "idletime"):
		c.W.Int(0)
	case eq(sub, "freq"):
		c.W.Error(errNoLFU)
	}
}

func runMemory(c *Ctx, argv [][]byte) {
	if err := lookupSpec("memory").CheckSub(argv); err != nil {
		c.W.Error(err)
		return
	}
	if eq(argv[1], "help") {
		WriteHelp(c.W, argv[0], []string{
			"USAGE <key> [SAMPLES <count>]",
			"    Return memory in bytes used by <key> and its value. Nested values are",
			"    sampled up to <count> times (default: 5, 0 means sample all).",
		})
		return
	}
	for j := 3; j < len(argv); j++ {
		if eq(argv[j], "samples") && j+1 < len(argv) {
			n, ok := parseInt(argv[j+1])
			if !ok {
				c.W.Error(ErrNotInteger)
				return
			}
			if n < 0 {
				c.W.Error(ErrSyntax)
				return
			}
			j++
			continue
		}
		c.W.Error(ErrSyntax)
		return
	}
	e := c.lookup(argv[2])
	if e == nil {
		c.W.Null()
		return
	}
	// Goblin measures a set exactly; SAMPLES is accepted and not needed.
	c.W.Int(int64(KeyMemory(string(argv[2]), e)))
}

func lookupSpec(name string) *Spec { return table[name] }
