// Package testutil holds the helpers Goblin's tests share: the seed of a
// randomized test, the size of a scale test, polling for a condition, a
// buffer a logger and the test both use, grouping a history by key, names
// for Docker tests' images and projects, free loopback addresses, a
// reference redis-server, and tmpfs mounts for disk-full tests. It is
// imported by tests only.
package testutil

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Seed returns the seed of a randomized test: GOBLIN_SEED when set (to
// replay a failure), else a random one. It is logged either way.
func Seed(t testing.TB) uint64 {
	t.Helper()
	seed := rand.Uint64()
	if s := os.Getenv("GOBLIN_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("GOBLIN_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("GOBLIN_SEED=%d", seed)
	return seed
}

// ScaleMembers returns how many members a scale test builds: def, or
// GOBLIN_SCALE_MEMBERS (at least 1000) when set; set reports which.
func ScaleMembers(t testing.TB, def int) (n int, set bool) {
	t.Helper()
	s := os.Getenv("GOBLIN_SCALE_MEMBERS")
	if s == "" {
		return def, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1000 {
		t.Fatalf("GOBLIN_SCALE_MEMBERS=%q: want a number of members, 1000 or more", s)
	}
	return n, true
}

// Rand is a generator seeded with Seed; stream tells apart the
// generators of different packages' tests run with the same seed.
func Rand(t testing.TB, stream uint64) *rand.Rand {
	t.Helper()
	return rand.New(rand.NewPCG(Seed(t), stream))
}

// DockerNames returns the image and the compose project a test builds
// and runs, named after what and after a random suffix. Under test.sh the
// suffix begins with the run's tag (GOBLIN_E2E_RUN), and what is
// goblin-e2e or goblin-drill-e2e, so that a run stopped before the tests'
// cleanups ran can remove what its tests left.
func DockerNames(t testing.TB, what string) (image, project string) {
	t.Helper()
	suffix := fmt.Sprintf("%d", Rand(t, 3).Uint32())
	if run := os.Getenv("GOBLIN_E2E_RUN"); run != "" {
		suffix = run + "-" + suffix
	}
	return what + ":" + suffix, what + "-" + suffix
}

// SyncBuffer is a bytes.Buffer safe for concurrent writers and readers,
// for logs a test prints when it fails.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Poll calls cond until it holds, failing the test after timeout with
// what it was waiting for.
func Poll(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	Eventually(t, timeout, func() error {
		if !cond() {
			return fmt.Errorf("waiting for %s", what)
		}
		return nil
	})
}

// Eventually calls cond until it returns nil, failing the test after
// timeout with the last error.
func Eventually(t testing.TB, timeout time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v: %v", timeout, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// GroupBy splits items into groups of equal key, each in the items'
// order, the groups in the order their keys first appear (a
// linearizability model's partition of a history by key).
func GroupBy[T any, K comparable](items []T, key func(T) K) [][]T {
	at := map[K]int{}
	var out [][]T
	for _, it := range items {
		k := key(it)
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], it)
	}
	return out
}

// ParseInfo parses the text of an INFO reply into its fields (section
// headers and blank lines skipped).
func ParseInfo(s string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && !strings.HasPrefix(k, "#") {
			out[k] = v
		}
	}
	return out
}
