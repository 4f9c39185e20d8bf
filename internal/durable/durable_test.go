package durable

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReplaceFile: the file holds the new content with the mode asked
// for, no temporary file is left, and a directory that cannot take the file is an error.
func TestReplaceFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	for _, content := range []string{"first", "second, longer"} {
		if err := ReplaceFile(p, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil || string(b) != content {
			t.Fatalf("file holds %q (%v), want %q", b, err, content)
		}
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o640 {
			t.Fatalf("file mode %v (%v), want 0640", st.Mode(), err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("directory holds %d entries, want the file alone", len(ents))
	}
	if err := ReplaceFile(filepath.Join(dir, "missing", "f"), []byte("x"), 0o644); err == nil {
		t.Fatal("writing into a missing directory succeeded")
	}
	if err := SyncDir(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("syncing a missing directory succeeded")
	}
}
