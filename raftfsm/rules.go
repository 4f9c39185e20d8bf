package raftfsm

import (
	"github.com/goblindb/goblin/keyspace"
	"github.com/goblindb/goblin/packed"
)

// RulesEntry returns the entry that installs rules.
func RulesEntry(rules keyspace.Rules) *Entry {
	e := &Entry{Op: OpRules}
	for _, r := range rules {
		e.Rules = append(e.Rules, Rule{Pattern: r.Pattern, Layout: uint8(r.Layout)})
	}
	return e
}

func rulesFromLog(rs []Rule) keyspace.Rules {
	var out keyspace.Rules
	for _, r := range rs {
		out = append(out, keyspace.Rule{Pattern: r.Pattern, Layout: packed.Layout(r.Layout)})
	}
	return out
}
