package faults

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// tcpListen is the state column of a listening socket in /proc/net/tcp.
const tcpListen = "0A"

// procSocket is one line of /proc/net/{tcp,tcp6,udp,udp6}.
type procSocket struct {
	port  int
	state string
	inode string
}

// readProcNet parses one /proc/net socket table; a missing file (no IPv6)
// is an empty table.
func readProcNet(path string) ([]procSocket, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []procSocket
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
		f := strings.Fields(sc.Text())
		if len(f) < 10 {
			continue
		}
		_, portHex, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		port, err := strconv.ParseUint(portHex, 16, 16)
		if err != nil {
			continue
		}
		out = append(out, procSocket{port: int(port), state: f[3], inode: f[9]})
	}
	return out, sc.Err()
}

// socketInodes returns the inodes of the sockets process pid holds open.
func socketInodes(pid int) (map[string]bool, error) {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, e := range ents {
		link, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		if ino, ok := strings.CutPrefix(link, "socket:["); ok {
			out[strings.TrimSuffix(ino, "]")] = true
		}
	}
	return out, nil
}

// PIDByPort returns the process listening on TCP port (on any local
// address), as seen from this process's network namespace.
func PIDByPort(port int) (int, error) {
	inodes := map[string]bool{}
	for _, t := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		socks, err := readProcNet(t)
		if err != nil {
			return 0, err
		}
		for _, s := range socks {
			if s.port == port && s.state == tcpListen && s.inode != "0" {
				inodes[s.inode] = true
			}
		}
	}
	if len(inodes) == 0 {
		return 0, fmt.Errorf("faults: nothing listens on TCP port %d here", port)
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		held, err := socketInodes(pid)
		if err != nil {
			continue
		}
		for ino := range inodes {
			if held[ino] {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("faults: TCP port %d is listened on by a process this user cannot see (run as its owner or root)", port)
}

// PIDByAddr is PIDByPort for the port of a host:port address.
func PIDByAddr(addr string) (int, error) {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return 0, fmt.Errorf("faults: bad port in %q", addr)
	}
	return PIDByPort(port)
}

// ListeningPorts returns the TCP ports process pid listens on and the UDP
// ports it has bound, each sorted.
func ListeningPorts(pid int) (tcp, udp []int, err error) {
	held, err := socketInodes(pid)
	if err != nil {
		return nil, nil, err
	}
	collect := func(tables []string, listenOnly bool) ([]int, error) {
		seen := map[int]bool{}
		for _, t := range tables {
			socks, err := readProcNet(filepath.Join("/proc", strconv.Itoa(pid), "net", t))
			if err != nil {
				return nil, err
			}
			for _, s := range socks {
				if held[s.inode] && s.port != 0 && (!listenOnly || s.state == tcpListen) {
					seen[s.port] = true
				}
			}
		}
		var out []int
		for p := range seen {
			out = append(out, p)
		}
		sort.Ints(out)
		return out, nil
	}
	if tcp, err = collect([]string{"tcp", "tcp6"}, true); err != nil {
		return nil, nil, err
	}
	if udp, err = collect([]string{"udp", "udp6"}, false); err != nil {
		return nil, nil, err
	}
	return tcp, udp, nil
}
