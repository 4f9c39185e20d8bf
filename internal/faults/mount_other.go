//go:build !linux

package faults

// mountNetCls: cgroups are Linux's.
func mountNetCls(dir string) error {
	return unsupported("network partitions need Linux (iptables and the net_cls cgroup)")
}
