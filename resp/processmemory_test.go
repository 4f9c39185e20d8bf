package resp

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCgroupMemoryLimit: the limit that counts is the lowest on the path
// from the process's own cgroup up to the root, in cgroup v2 and v1
// layouts, whether the mount shows the host's hierarchy or a container's.
func TestCgroupMemoryLimit(t *testing.T) {
	const noLimitV1 = "9223372036854771712\n"
	for _, tc := range []struct {
		name  string
		files map[string]string // path under the mount: content
		self  string
		want  int64
	}{
		{"v2 service limit (systemd MemoryMax)", map[string]string{
			"system.slice/memory.max":                 "max\n",
			"system.slice/goblind.service/memory.max": "1073741824\n",
		}, "0::/system.slice/goblind.service\n", 1 << 30},
		{"v2 lower limit on the slice", map[string]string{
			"system.slice/memory.max":                 "536870912\n",
			"system.slice/goblind.service/memory.max": "max\n",
		}, "0::/system.slice/goblind.service\n", 512 << 20},
		{"v2 container: its cgroup is the mount's root", map[string]string{
			"memory.max": "2147483648\n",
		}, "0::/docker/0123abcd\n", 2 << 30},
		{"v2 no limit", map[string]string{
			"user.slice/memory.max": "max\n",
		}, "0::/user.slice\n", 0},
		{"v1 memory hierarchy", map[string]string{
			"memory/memory.limit_in_bytes":     noLimitV1,
			"memory/gob/memory.limit_in_bytes": "4294967296\n",
		}, "9:name=systemd:/\n4:memory:/gob\n1:cpu:/\n0::/\n", 4 << 30},
		{"v1 memory mounted with another controller", map[string]string{
			"memory/a/b/memory.limit_in_bytes": "3221225472\n",
			"memory/a/memory.limit_in_bytes":   noLimitV1,
		}, "5:cpuacct,memory:/a/b\n", 3 << 30},
		{"v1 container", map[string]string{
			"memory/memory.limit_in_bytes": "268435456\n",
		}, "4:memory:/docker/0123abcd\n", 256 << 20},
		{"nothing readable", nil, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for name, content := range tc.files {
				p := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := cgroupMemoryLimit(root, []byte(tc.self)); got != tc.want {
				t.Fatalf("limit %d, want %d", got, tc.want)
			}
		})
	}
}
