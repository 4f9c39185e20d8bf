package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/redis/go-redis/v9"
	"gopkg.in/yaml.v3"
)

// composeFile is the part of docker-compose.yml the loopback test reads.
type composeFile struct {
	Services map[string]composeService `yaml:"services"`
}

type composeService struct {
	Image       string            `yaml:"image"`
	Hostname    string            `yaml:"hostname"`
	Environment map[string]string `yaml:"environment"`
	Ports       []string          `yaml:"ports"`
	Volumes     []string          `yaml:"volumes"`
	Healthcheck struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
}

// composeVar matches ${NAME} and ${NAME:-default}.
var composeVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// readCompose reads docker-compose.yml with its variables substituted from
// vars, else their defaults, as docker-compose would.
func readCompose(t testing.TB, vars map[string]string) composeFile {
	t.Helper()
	raw, err := os.ReadFile("../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	text := composeVar.ReplaceAllStringFunc(string(raw), func(m string) string {
		sub := composeVar.FindStringSubmatch(m)
		if v, ok := vars[sub[1]]; ok {
			return v
		}
		return sub[3]
	})
	var cf composeFile
	if err := yaml.Unmarshal([]byte(text), &cf); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	if len(cf.Services) == 0 {
		t.Fatal("docker-compose.yml has no services")
	}
	return cf
}

// loopbackService is a compose service mapped onto this machine: its own
// loopback address and a free port for each of its container ports.
type loopbackService struct {
	name  string
	ip    string
	ports map[string]string // container port → free port on ip
	env   map[string]string
}

// addr maps a container port of the service to its loopback address.
func (s *loopbackService) addr(t testing.TB, port string) string {
	if p, ok := s.ports[port]; ok {
		return net.JoinHostPort(s.ip, p)
	}
	_, p, err := net.SplitHostPort(testutil.FreeAddr(t, s.ip))
	if err != nil {
		t.Fatal(err)
	}
	s.ports[port] = p
	return net.JoinHostPort(s.ip, p)
}

// TestComposeTopologyOnLoopback starts the services of docker-compose.yml
// as local processes, configured by the file's own environment (the
// GOBLIN_* variables), each service on its own loopback address
// (127.0.0.x) with free ports, and checks that they form the cluster the
// file describes and pass its healthchecks. It proves the compose file on
// every machine, Docker or not.
func TestComposeTopologyOnLoopback(t *testing.T) {
	cf := readCompose(t, nil)
	names := make([]string, 0, len(cf.Services))
	for name := range cf.Services {
		names = append(names, name)
	}
	sort.Strings(names)

	// Each service gets 127.0.0.(11+i); names resolve to it.
	byHost := map[string]*loopbackService{}
	published := map[string]*loopbackService{} // host port → service
	var svcs []*loopbackService
	for i, name := range names {
		s := &loopbackService{name: name, ip: fmt.Sprintf("127.0.0.%d", 11+i), ports: map[string]string{}}
		svcs = append(svcs, s)
		byHost[name] = s
		if h := cf.Services[name].Hostname; h != "" {
			byHost[h] = s
		}
		// Secure by default: published on loopback only, the node-to-node
		// plane and the clients authenticated by secrets.
		env := cf.Services[name].Environment
		if env["GOBLIN_CLUSTER_SECRET_FILE"] == "" || env["GOBLIN_REQUIREPASS_FILE"] == "" {
			t.Fatalf("service %s has no cluster secret or no password: %v", name, env)
		}
		for _, p := range cf.Services[name].Ports {
			if !strings.HasPrefix(p, "127.0.0.1:") {
				t.Fatalf("service %s publishes %q beyond loopback by default", name, p)
			}
			parts := strings.Split(p, ":")
			if len(parts) >= 2 && parts[len(parts)-1] == "6379" {
				published[parts[len(parts)-2]] = s
			}
		}
	}
	// rewrite maps one host:port value seen from inside service s.
	rewrite := func(s *loopbackService, hp string) string {
		host, port, err := net.SplitHostPort(hp)
		if err != nil {
			return hp
		}
		switch {
		case host == "0.0.0.0" || host == "127.0.0.1" && s.ports[port] != "":
			return s.addr(t, port)
		case byHost[host] != nil:
			return byHost[host].addr(t, port)
		case (host == "127.0.0.1" || host == "localhost") && published[port] != nil:
			return published[port].addr(t, "6379") // a published port
		}
		return hp
	}
	// Docker secrets are files under /run/secrets: each gets a file of
	// random text here, the same for every service.
	secretsDir := t.TempDir()
	secret := func(v string) string {
		name, ok := strings.CutPrefix(v, "/run/secrets/")
		if !ok {
			return v
		}
		p := filepath.Join(secretsDir, name)
		if _, err := os.Stat(p); err != nil {
			b := make([]byte, 32)
			rand.Read(b)
			if err := os.WriteFile(p, []byte(hex.EncodeToString(b)+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	for _, s := range svcs {
		svc := cf.Services[s.name]
		s.env = map[string]string{}
		for k, v := range svc.Environment {
			if strings.HasPrefix(v, "/run/secrets/") {
				s.env[k] = secret(v)
				continue
			}
			var out []string
			for _, part := range strings.Split(v, ",") {
				out = append(out, rewrite(s, part))
			}
			s.env[k] = strings.Join(out, ",")
		}
		s.env["GOBLIN_DATA"] = t.TempDir()
		if !strings.HasPrefix(svc.Image, "goblin") {
			t.Fatalf("service %s runs image %q, not goblin", s.name, svc.Image)
		}
	}
	var nodes []*ClusterNode
	envs := map[string][]string{}
	for _, s := range svcs {
		var env []string
		for k, v := range s.env {
			env = append(env, k+"="+v)
		}
		sort.Strings(env)
		envs[s.name] = env
		t.Logf("%s on %s: %v", s.name, s.ip, env)
		var pass string
		if f := s.env["GOBLIN_REQUIREPASS_FILE"]; f != "" {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			pass = strings.TrimSpace(string(b))
		}
		g := StartGoblind(t, NodeOptions{Addr: s.env["GOBLIN_ADDR"], Raft: s.env["GOBLIN_RAFT_ADDR"], Data: s.env["GOBLIN_DATA"], Env: env, Password: pass, NoWait: true})
		nodes = append(nodes, &ClusterNode{Goblind: g, ID: s.env["GOBLIN_ID"], Gossip: s.env["GOBLIN_GOSSIP_ADDR"]})
	}
	for _, n := range nodes {
		n.WaitReady(20 * time.Second)
	}
	leader := WaitLeader(t, nodes, 30*time.Second)
	t.Logf("the compose topology formed a cluster led by %s", leader.ID)

	// Healthchecks, as the file states them.
	for _, s := range svcs {
		test := cf.Services[s.name].Healthcheck.Test
		if len(test) < 2 || test[0] != "CMD" || test[1] != "/goblind" {
			t.Fatalf("%s: healthcheck %v does not run goblind", s.name, test)
		}
		var args []string
		for _, a := range test[2:] {
			args = append(args, rewrite(s, a))
		}
		cmd := exec.Command(goblindBin, args...)
		cmd.Env = append(os.Environ(), envs[s.name]...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s healthcheck %v: %v\n%s", s.name, args, err, out)
		}
	}

	// Write through one node, read through the others; clients are told
	// the announced addresses.
	ctx := context.Background()
	if err := nodes[0].Client().ZAdd(ctx, "lb", redis.Z{Score: 1, Member: "a"}).Err(); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes[1:] {
		if s, err := n.Client().ZScore(ctx, "lb", "a").Result(); err != nil || s != 1 {
			t.Fatalf("%s: ZSCORE %v %v", n.ID, s, err)
		}
	}
	slots, err := nodes[1].Client().ClusterSlots(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(slots) != 1 || len(slots[0].Nodes) != len(nodes) || slots[0].Nodes[0].Addr != leader.Addr {
		t.Fatalf("CLUSTER SLOTS %+v, leader at %s", slots, leader.Addr)
	}
}
