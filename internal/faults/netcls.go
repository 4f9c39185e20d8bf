package faults

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// groupPrefix starts the name of every net_cls cgroup this package
// creates; the creating process's PID follows, as for chains.
const groupPrefix = "goblin-drill-"

// netClsMounts are where the net_cls hierarchy is mounted when no mount
// exists yet: the usual place first, a private one second.
var netClsMounts = []string{"/sys/fs/cgroup/net_cls", "/run/goblin-net_cls"}

var netClsOnce struct {
	sync.Mutex
	root string
}

// netClsRoot returns the mount point of the net_cls cgroup hierarchy,
// mounting it if needed.
func netClsRoot() (string, error) {
	netClsOnce.Lock()
	defer netClsOnce.Unlock()
	if netClsOnce.root != "" {
		return netClsOnce.root, nil
	}
	if root := findNetCls(); root != "" {
		netClsOnce.root = root
		return root, nil
	}
	var errs []string
	for _, dir := range netClsMounts {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if err := mountNetCls(dir); err != nil {
			// Another process may have mounted it meanwhile.
			if root := findNetCls(); root != "" {
				netClsOnce.root = root
				return root, nil
			}
			errs = append(errs, fmt.Sprintf("mount net_cls on %s: %v", dir, err))
			continue
		}
		netClsOnce.root = dir
		return dir, nil
	}
	return "", unsupported("the net_cls cgroup controller is not available (%s)", strings.Join(errs, "; "))
}

// findNetCls returns the mount point of a cgroup v1 hierarchy with the
// net_cls controller, or "".
func findNetCls() string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// ID parent major:minor root mountpoint options... - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 3 || qf[0] != "cgroup" || pf[3] != "/" {
			continue
		}
		for _, o := range strings.Split(qf[2], ",") {
			if o == "net_cls" {
				return pf[4]
			}
		}
	}
	return ""
}

// class is one net_cls cgroup with its class ID.
type class struct {
	dir string
	id  uint32
}

// newClass creates the cgroup name under the net_cls root with class id.
func newClass(name string, id uint32) (*class, error) {
	root, err := netClsRoot()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, name)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, unsupported("creating net_cls cgroup %s: %v", dir, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "net_cls.classid"), []byte(strconv.FormatUint(uint64(id), 10)), 0o644); err != nil {
		os.Remove(dir)
		return nil, unsupported("setting the class of %s: %v", dir, err)
	}
	return &class{dir: dir, id: id}, nil
}

// add moves the process pid (all its threads) into the class; the
// kernel retags the sockets it holds.
func (c *class) add(pid int) error {
	if err := os.WriteFile(filepath.Join(c.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		return fmt.Errorf("faults: moving pid %d into %s: %w", pid, c.dir, err)
	}
	return nil
}

// remove moves every process of the class back to the root cgroup and
// deletes the class.
func (c *class) remove() error {
	return removeGroup(c.dir)
}

func removeGroup(dir string) error {
	root := filepath.Dir(dir)
	if raw, err := os.ReadFile(filepath.Join(dir, "cgroup.procs")); err == nil {
		for _, p := range strings.Fields(string(raw)) {
			os.WriteFile(filepath.Join(root, "cgroup.procs"), []byte(p), 0o644)
		}
	}
	return os.Remove(dir)
}

// sweepClasses removes the cgroups of ours whose creating process is gone.
func sweepClasses() {
	root := findNetCls()
	if root == "" {
		return
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range ents {
		name, ok := strings.CutPrefix(e.Name(), groupPrefix)
		if !e.IsDir() || !ok {
			continue
		}
		pidText, _, _ := strings.Cut(name, "-")
		if pid, err := strconv.Atoi(pidText); err == nil && !alive(pid) {
			removeGroup(filepath.Join(root, e.Name()))
		}
	}
}
