package cluster_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/goblindb/goblin/cluster"
)

func secretOf(b byte) []byte { return bytes.Repeat([]byte{b}, cluster.MinSecretLen) }

// A cluster whose nodes hold a secret forms, forwards and reads through
// followers as one without; a node holding another secret is never seen
// by gossip and never joins.
func TestClusterWithSecret(t *testing.T) {
	e := newEnv(t, 3)
	secret := secretOf('s')
	e.creds = func(id string) (cluster.Credentials, [][]byte) {
		s := secret
		if id == "stranger" {
			s = secretOf('x')
		}
		c, err := cluster.NewSecretCredentials(id, [][]byte{s})
		if err != nil {
			t.Fatal(err)
		}
		k, _ := cluster.GossipKeyFromSecret(s)
		return c, [][]byte{k}
	}
	e.startAll([]string{"n1", "n2", "n3"}, 3, nil)
	e.waitFormed(3)
	fs := e.followers()
	if err := fs[0].rdb.ZAdd(ctx(t), "k", redisZ(1, "a")).Err(); err != nil {
		t.Fatalf("a write through a follower: %v", err)
	}
	if s, err := fs[1].rdb.ZScore(ctx(t), "k", "a").Result(); err != nil || s != 1 {
		t.Fatalf("a linearizable read on a follower: %v %v", s, err)
	}
	stranger := e.start("stranger", 0, "")
	for range 20 {
		for _, tn := range e.all() {
			for _, m := range tn.c.Members() {
				if (tn.id == "stranger") != (m.ID == "stranger") {
					t.Fatalf("%s sees %s", tn.id, m.ID)
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	e.kill(stranger.id)
	e.waitFormed(3)
}

// Gossip keys rotate without the cluster noticing: each step rolled
// through every node (add the new key second, make it first, drop the
// old) keeps every member; afterwards a node with the new key alone
// joins, and one with the old key alone is not seen.
func TestGossipKeyRotation(t *testing.T) {
	e := newEnv(t, 3)
	oldK, newK := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	keys := map[string][][]byte{"n4": {newK}, "old": {oldK}}
	e.creds = func(id string) (cluster.Credentials, [][]byte) {
		if k, ok := keys[id]; ok {
			return nil, k
		}
		return nil, [][]byte{oldK}
	}
	e.startAll([]string{"n1", "n2", "n3"}, 3, nil)
	e.waitFormed(3)
	for _, step := range [][][]byte{{oldK, newK}, {newK, oldK}, {newK}} {
		for _, tn := range e.all() {
			if err := tn.c.SetGossipKeys(step); err != nil {
				t.Fatal(err)
			}
		}
		e.waitFormed(3)
		for _, tn := range e.all() {
			alive := 0
			for _, m := range tn.c.Members() {
				if m.State == "alive" {
					alive++
				}
			}
			if alive != 3 {
				t.Fatalf("%s sees %d alive members during the rotation", tn.id, alive)
			}
		}
	}
	e.start("n4", 0, "")
	e.waitFormed(4)
	e.start("old", 0, "")
	for range 20 {
		for _, tn := range e.all() {
			if tn.id == "old" {
				continue
			}
			for _, m := range tn.c.Members() {
				if m.ID == "old" {
					t.Fatalf("%s sees a node with the retired key", tn.id)
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
}
