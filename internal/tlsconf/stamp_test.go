package tlsconf

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
)

func TestWatch(t *testing.T) {
	dir := t.TempDir()
	set, err := WriteSet(dir, localHosts, "server")
	if err != nil {
		t.Fatal(err)
	}
	f := set["server"]
	ca, err := LoadCA(f.CA, filepath.Join(dir, "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	r := mustLoad(t, f)
	var mu sync.Mutex
	var errs []error
	reloads := 0
	r.OnReload(func() { mu.Lock(); reloads++; mu.Unlock() })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Watch(ctx, 2*time.Millisecond, func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() })
	}()
	defer func() { cancel(); <-done }()
	count := func() (int, int) { mu.Lock(); defer mu.Unlock(); return reloads, len(errs) }

	// A new certificate written by rename (new inode) is picked up.
	l := issue(t, ca, "renamed", f)
	testutil.Poll(t, 10*time.Second, "the renamed certificate", func() bool { return r.Leaf().SerialNumber.Cmp(l.Cert.SerialNumber) == 0 })

	// A broken file is reported once and the certificate in use stays.
	if err := os.WriteFile(f.Cert, []byte("half a certificate"), 0o644); err != nil {
		t.Fatal(err)
	}
	testutil.Poll(t, 10*time.Second, "the error report", func() bool { _, n := count(); return n >= 1 })
	mu.Lock()
	if !strings.Contains(errs[0].Error(), f.Cert) {
		t.Errorf("reported error %q does not name %s", errs[0], f.Cert)
	}
	mu.Unlock()
	if r.Leaf().SerialNumber.Cmp(l.Cert.SerialNumber) != 0 {
		t.Fatal("a broken file replaced the certificate in use")
	}

	// Rewriting the files in place (same inode) is picked up too.
	l2, err := ca.Issue(LeafSpec{Name: "in place", Hosts: localHosts})
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	if err := l2.WriteFiles(filepath.Join(tmp, "c"), filepath.Join(tmp, "k")); err != nil {
		t.Fatal(err)
	}
	for _, p := range [][2]string{{filepath.Join(tmp, "k"), f.Key}, {filepath.Join(tmp, "c"), f.Cert}} {
		data, _ := os.ReadFile(p[0])
		if err := os.WriteFile(p[1], data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Poll(t, 10*time.Second, "the certificate rewritten in place", func() bool { return r.Leaf().SerialNumber.Cmp(l2.Cert.SerialNumber) == 0 })
	if n, _ := count(); n < 2 {
		t.Fatalf("OnReload ran %d times, want at least 2", n)
	}
}

// TestCheckReportsOnce: a broken file is reported once, not at every
// look, and tried again when it changes.
func TestCheckReportsOnce(t *testing.T) {
	f := writeSet(t, "server")["server"]
	r := mustLoad(t, f)
	var failed [3]stamp
	var errs []error
	onErr := func(err error) { errs = append(errs, err) }
	r.check(&failed, onErr)
	if len(errs) != 0 {
		t.Fatalf("unchanged files: %v", errs)
	}
	for i, data := range []string{"broken", "broken, differently"} {
		if err := WriteFileAtomic(f.Cert, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			r.check(&failed, onErr)
		}
		if len(errs) != i+1 {
			t.Fatalf("after change %d: %d errors reported, want %d", i+1, len(errs), i+1)
		}
	}
}

func TestWatchStopsWithContext(t *testing.T) {
	r := mustLoad(t, writeSet(t, "server")["server"])
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Watch(ctx, time.Millisecond, nil); close(done) }()
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Watch did not return after its context ended")
	}
}
