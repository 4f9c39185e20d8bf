package faults

import "syscall"

// mountNetCls mounts the cgroup v1 hierarchy of the net_cls controller.
func mountNetCls(dir string) error {
	return syscall.Mount("net_cls", dir, "cgroup", 0, "net_cls")
}
