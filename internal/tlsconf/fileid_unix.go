//go:build unix

package tlsconf

import (
	"os"
	"syscall"
)

// fileID returns the file's inode and device numbers.
func fileID(fi os.FileInfo) (ino, dev uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino), uint64(st.Dev)
	}
	return 0, 0
}
