package resp

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"strconv"
	"strings"
)

// processMemory returns the memory this process may use: the machine's
// (MemTotal), or the lowest memory limit of the cgroups it runs in when
// lower; 0 when neither is known.
func processMemory() int64 {
	total := meminfoTotal("/proc/meminfo")
	self, _ := os.ReadFile("/proc/self/cgroup")
	if l := cgroupMemoryLimit("/sys/fs/cgroup", self); l > 0 && (total == 0 || l < total) {
		total = l
	}
	return total
}

// meminfoTotal reads MemTotal from a /proc/meminfo file (0: unknown).
func meminfoTotal(name string) int64 {
	b, err := os.ReadFile(name)
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if f := bytes.Fields(sc.Bytes()); len(f) >= 2 && string(f[0]) == "MemTotal:" {
			if kb, err := strconv.ParseInt(string(f[1]), 10, 64); err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// cgroupMemoryLimit returns the lowest memory limit set on the cgroup a
// process is in or on any cgroup above it (0: none), given the cgroup
// file system's mount point and the process's /proc/self/cgroup. A
// service's limit sits on its own cgroup (systemd's MemoryMax= on
// /system.slice/NAME.service), not at the root, so the process's path is
// followed: cgroup v2's memory.max under root, v1's
// memory.limit_in_bytes under root/memory. Inside a container the mount
// shows the container's own cgroup as its root while /proc/self/cgroup
// may still name the host's path; the directories that do not exist are
// skipped, and the root's file is always read.
func cgroupMemoryLimit(root string, self []byte) int64 {
	limit := int64(0)
	take := func(name string) {
		b, err := os.ReadFile(name)
		if err != nil {
			return
		}
		// "max" (v2) or a number near 2^63 (v1) is no limit.
		n, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
		if err == nil && n > 0 && n < 1<<62 && (limit == 0 || n < limit) {
			limit = n
		}
	}
	walk := func(dir, p, file string) {
		for p = path.Clean("/" + p); ; p = path.Dir(p) {
			take(path.Join(dir, p, file))
			if p == "/" {
				return
			}
		}
	}
	v1, v2 := "", ""
	for _, line := range strings.Split(string(self), "\n") {
		// hierarchy-ID:controllers:path
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			v2 = f[2]
		}
		for _, c := range strings.Split(f[1], ",") {
			if c == "memory" {
				v1 = f[2]
			}
		}
	}
	walk(root, v2, "memory.max")
	walk(path.Join(root, "memory"), v1, "memory.limit_in_bytes")
	return limit
}
