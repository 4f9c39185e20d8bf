package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goblindb/goblin/internal/testutil"
	"github.com/redis/go-redis/v9"
)

// dockerRun runs a docker or docker-compose command and returns its
// combined output.
func dockerRun(t testing.TB, timeout time.Duration, env []string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestDockerCompose builds the image from scratch, brings up the compose
// cluster with the real engine, writes through one container and reads
// through the others, docker-kills the leader's container, checks a new
// leader serves writes, and brings it all down (volumes too), even when
// the test fails. It is skipped where no Docker engine answers.
func TestDockerCompose(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an image and runs containers; skipped in -short mode")
	}
	if out, err := dockerRun(t, 20*time.Second, nil, "docker", "info", "--format", "{{.ServerVersion}}"); err != nil {
		t.Skipf("no Docker engine answers (docker info: %v: %s)", err, strings.TrimSpace(out))
	}
	if out, err := dockerRun(t, 20*time.Second, nil, "docker-compose", "version"); err != nil {
		t.Skipf("docker-compose is not available: %v: %s", err, strings.TrimSpace(out))
	}
	image, project := testutil.DockerNames(t, "goblin-e2e")
	if out, err := dockerRun(t, 5*time.Minute, nil, "scripts/docker-image.sh", image); err != nil {
		t.Fatalf("building the image: %v\n%s", err, out)
	}
	t.Cleanup(func() { dockerRun(t, time.Minute, nil, "docker", "rmi", "-f", image) })

	secrets := t.TempDir()
	if out, err := dockerRun(t, time.Minute, nil, "scripts/docker-secrets.sh", secrets); err != nil {
		t.Fatalf("writing the secrets: %v\n%s", err, out)
	}
	pass, err := os.ReadFile(filepath.Join(secrets, "requirepass"))
	if err != nil {
		t.Fatal(err)
	}
	ports := map[string]string{}
	env := []string{"GOBLIN_IMAGE=" + image, "GOBLIN_SECRETS=" + secrets}
	for i := 1; i <= 3; i++ {
		_, p, _ := net.SplitHostPort(testutil.FreeAddr(t, ""))
		ports[fmt.Sprintf("goblin%d", i)] = p
		env = append(env, fmt.Sprintf("GOBLIN%d_PORT=%s", i, p))
	}
	compose := func(timeout time.Duration, args ...string) (string, error) {
		return dockerRun(t, timeout, env, "docker-compose", append([]string{"-p", project, "-f", "docker-compose.yml"}, args...)...)
	}
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := compose(time.Minute, "logs", "--no-color")
			t.Logf("compose logs:\n%s", out)
		}
		if out, err := compose(3*time.Minute, "down", "-v", "--remove-orphans", "--timeout", "30"); err != nil {
			t.Errorf("docker-compose down: %v\n%s", err, out)
		}
	})
	if out, err := compose(3*time.Minute, "up", "-d"); err != nil {
		t.Fatalf("docker-compose up: %v\n%s", err, out)
	}

	clients := map[string]*redis.Client{}
	for svc, p := range ports {
		c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + p, Password: strings.TrimSpace(string(pass)), MaxRetries: -1, ReadTimeout: 15 * time.Second})
		t.Cleanup(func() { c.Close() })
		clients[svc] = c
	}
	alive := func() map[string]*redis.Client { return clients }
	leader := waitLeaderOf(t, 60*time.Second, alive)
	t.Logf("compose cluster formed, led by %s", leader)
	testutil.Eventually(t, 60*time.Second, func() error {
		out, err := compose(time.Minute, "ps")
		if err != nil {
			return err
		}
		if n := strings.Count(out, "(healthy)"); n != 3 {
			return fmt.Errorf("%d of 3 containers healthy:\n%s", n, out)
		}
		return nil
	})

	ctx := context.Background()
	var writer string
	for svc := range clients {
		if svc != leader {
			writer = svc
			break
		}
	}
	if err := clients[writer].ZAdd(ctx, "lb", redis.Z{Score: 1, Member: "a"}).Err(); err != nil {
		t.Fatalf("ZADD through %s: %v", writer, err)
	}
	for svc, c := range clients {
		if s, err := c.ZScore(ctx, "lb", "a").Result(); err != nil || s != 1 {
			t.Fatalf("ZSCORE through %s: %v %v", svc, s, err)
		}
	}

	// An outsider on the compose network, without the cluster secret:
	// Raft's own transport gets nothing into any log, and a goblind with
	// another secret never joins the gossip.
	var gateway string
	var gossipSeeds []string
	for svc := range clients {
		id, err := compose(time.Minute, "ps", "-q", svc)
		if err != nil {
			t.Fatal(err)
		}
		out, err := dockerRun(t, time.Minute, nil, "docker", "inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{.Gateway}}{{end}}", strings.TrimSpace(id))
		f := strings.Fields(out)
		if err != nil || len(f) != 2 {
			t.Fatalf("docker inspect %s: %v %q", svc, err, out)
		}
		gateway = f[1]
		if err := injectAppendEntries(t, net.JoinHostPort(f[0], "16379")); err == nil {
			t.Fatalf("%s answered an outsider's AppendEntries", svc)
		}
		gossipSeeds = append(gossipSeeds, net.JoinHostPort(f[0], "7946"))
	}
	outsider := StartGoblind(t, NodeOptions{Addr: testutil.FreeAddr(t, gateway), Raft: testutil.FreeAddr(t, gateway), Args: []string{"--id", "outsider",
		"--gossip-addr", testutil.FreeAddr(t, gateway), "--join", strings.Join(gossipSeeds, ","), "--cluster-secret-file", writeSecret(t), "--leave-on-shutdown=false"}})
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		for svc, c := range clients {
			ns, err := GoblinNodes(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range ns {
				if m["id"] == "outsider" {
					t.Fatalf("%s knows the outsider", svc)
				}
			}
		}
	}
	outsider.Stop()
	for svc, c := range clients {
		if n, err := c.Exists(ctx, "injected").Result(); err != nil || n != 0 {
			t.Fatalf("%s: EXISTS injected: %v %v", svc, n, err)
		}
	}

	id, err := compose(time.Minute, "ps", "-q", leader)
	if err != nil || strings.TrimSpace(id) == "" {
		t.Fatalf("container of %s: %v %q", leader, err, id)
	}
	if out, err := dockerRun(t, time.Minute, nil, "docker", "kill", strings.TrimSpace(id)); err != nil {
		t.Fatalf("docker kill: %v\n%s", err, out)
	}
	killed := time.Now()
	delete(clients, leader)
	var failover time.Duration
	testutil.Eventually(t, 60*time.Second, func() error {
		if err := clients[writer].ZAdd(ctx, "lb", redis.Z{Score: 2, Member: "b"}).Err(); err != nil {
			return err
		}
		failover = time.Since(killed)
		return nil
	})
	t.Logf("after docker kill of the leader's container, writes resumed in %v", failover)
	newLeader := waitLeaderOf(t, 60*time.Second, alive)
	if newLeader == leader {
		t.Fatal("the killed container still leads")
	}
	for svc, c := range clients {
		if s, err := c.ZScore(ctx, "lb", "b").Result(); err != nil || s != 2 {
			t.Fatalf("ZSCORE through %s after the failover: %v %v", svc, s, err)
		}
	}

	// down keeps the volumes; up recreates the network. A network made
	// in between takes the subnet just freed, so the containers come back
	// at new IPs, which the Raft configuration does not hold.
	ipOf := func(svc string) string {
		id, _ := compose(time.Minute, "ps", "-q", svc)
		out, _ := dockerRun(t, time.Minute, nil, "docker", "inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", strings.TrimSpace(id))
		return strings.TrimSpace(out)
	}
	before := ipOf(writer)
	downAt := time.Now()
	if out, err := compose(3*time.Minute, "down", "--timeout", "30"); err != nil {
		t.Fatalf("docker-compose down: %v\n%s", err, out)
	}
	shift := project + "-shift"
	if out, err := dockerRun(t, time.Minute, nil, "docker", "network", "create", shift); err != nil {
		t.Fatalf("docker network create: %v\n%s", err, out)
	}
	t.Cleanup(func() { dockerRun(t, time.Minute, nil, "docker", "network", "rm", shift) })
	if out, err := compose(3*time.Minute, "up", "-d"); err != nil {
		t.Fatalf("docker-compose up after down: %v\n%s", err, out)
	}
	for svc := range ports {
		if _, ok := clients[svc]; !ok {
			c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + ports[svc], Password: strings.TrimSpace(string(pass)), MaxRetries: -1, ReadTimeout: 15 * time.Second})
			t.Cleanup(func() { c.Close() })
			clients[svc] = c
		}
	}
	t.Logf("down and up took %v", time.Since(downAt).Round(time.Millisecond))
	leader = waitLeaderOf(t, 60*time.Second, alive)
	t.Logf("after down and up, led by %s; %s was at %s, now at %s", leader, writer, before, ipOf(writer))
	for svc, c := range clients {
		testutil.Eventually(t, 30*time.Second, func() error {
			got, err := c.ZRangeWithScores(ctx, "lb", 0, -1).Result()
			if err != nil {
				return err
			}
			if len(got) != 2 || got[0].Member != "a" || got[1].Member != "b" {
				return fmt.Errorf("lb through %s = %v", svc, got)
			}
			return nil
		})
	}
}
