package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type recordedKeys struct{ sets [][][]byte }

func (r *recordedKeys) SetGossipKeys(keys [][]byte) error {
	r.sets = append(r.sets, keys)
	return nil
}

// A SIGHUP that finds a secret the node refuses changes nothing: the
// gossip keys derived from it are not installed either, or the node
// would drop out of the others' gossip while saying nothing changed.
func TestReloadRefusedSecretKeepsGossipKeys(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "secret")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(strings.Repeat("a", 48))
	p := &planeOptions{secretFile: file}
	creds, err := p.load("n1", map[string]string{"--raft-addr": "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(creds.gossipKeys) == 0 {
		t.Fatal("no gossip key derived from the secret")
	}
	var keys recordedKeys
	write("tooshort")
	if err := p.reload(creds, &keys); err == nil || !strings.Contains(err.Error(), "too short") {
		t.Fatalf("reloading a short secret: %v", err)
	}
	if len(keys.sets) != 0 {
		t.Fatalf("gossip keys installed from a refused secret: %d", len(keys.sets))
	}
	os.Remove(file)
	if err := p.reload(creds, &keys); err == nil || len(keys.sets) != 0 {
		t.Fatalf("reloading a missing file: %v, %d key sets installed", err, len(keys.sets))
	}
	write(strings.Repeat("b", 48) + "\n" + strings.Repeat("a", 48))
	if err := p.reload(creds, &keys); err != nil {
		t.Fatal(err)
	}
	if len(keys.sets) != 1 || len(keys.sets[0]) != 2 {
		t.Fatalf("a rotated secret installed %v gossip key sets, want one of two keys", keys.sets)
	}
}

// An empty --cluster-secret-file (an unset variable in a script) is
// refused instead of starting without credentials.
func TestEmptySecretFileFlagRefused(t *testing.T) {
	o, err := parseFlags([]string{"--cluster-secret-file", ""})
	if err == nil || !strings.Contains(err.Error(), "cluster-secret-file") {
		t.Fatalf("parse: %v, %+v", err, o)
	}
}
