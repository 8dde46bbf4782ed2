package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// The spike of issue 24, scaled to this machine: one real redis-server,
// three gateway processes on it, and the load tool sending its arrivals
// through them as JSON clients (apps) without stickiness. It reports what
// the spike costs: every arrival answered, the first answers' latencies,
// the joins a second reached, and Redis's CPU, commands and scripts per
// join from Redis's own accounting.
//
// By default it is the short run CI makes (5,000 arrivals in 2 s); the
// full run of docs/scale.md is
//
//	WAITROOM_SPIKE_ARRIVALS=100000 WAITROOM_SPIKE_RAMP=10s go test -run TestSpike_Harness -count=1 -v ./cmd/waitroom-load/
//
// with WAITROOM_SPIKE_REDIS_CPU=0 to pin Redis to CPU 0 (taskset), and
// WAITROOM_SPIKE_CONNS=256 for a balancer's pool of 256 connections to
// each gateway rather than a connection per request in flight.
func TestSpike_Harness(t *testing.T) {
	arrivals, ramp, timeout := spikeEnv(t)
	srv := redistest.Start(t)
	client := srv.Client()
	if cpu := os.Getenv("WAITROOM_SPIKE_REDIS_CPU"); cpu != "" {
		pinRedis(t, client, cpu)
	}
	upstream := freeAddr(t) // the load tool's counting site: the first max_active go straight in
	store := fmt.Sprintf("{kind: redis, redis: {addrs: [%q]}}", srv.Addr())
	var targets []string
	for range 3 {
		targets = append(targets, startGatewayRoom(t, "http://"+upstream, store, harnessRoomJoin(t)).url+"/tickets")
	}
	// The run lasts the arrivals, then long enough for every visitor's
	// first poll (page.refresh 20s, the answer's refresh_after up to
	// refresh_max 30s), which places its ticket; a visitor still waiting
	// then is reported as such, not as an error.
	duration := ramp + 35*time.Second
	args := []string{"-target", strings.Join(targets, ","), "-spread", "request", "-accept", "json",
		"-visitors", strconv.Itoa(arrivals), "-ramp", ramp.String(), "-duration", duration.String(),
		"-timeout", timeout.String(), "-grace", "5s", "-requests", "0", "-after", "idle", "-upstream", upstream}
	if conns := os.Getenv("WAITROOM_SPIKE_CONNS"); conns != "" {
		args = append(args, "-conns", conns) // a balancer's pool to each gateway
	}
	// Redis's CPU with the gateways up and nobody arriving (its cron,
	// three gateways' connections and ticks): on this machine it is a
	// good part of a long window's, so the figures below are also given
	// above it.
	idleFrom := redisFigures(t, client)
	time.Sleep(3 * time.Second)
	before := redisFigures(t, client)
	idle := before.since(idleFrom)
	idleRate := idle.cpu.Seconds() / idle.wall.Seconds()
	t.Logf("Redis idle: %.1f%% of a core (%.3f s CPU in %.1f s, %d commands)", 100*idleRate, idle.cpu.Seconds(), idle.wall.Seconds(), idle.commands)
	var joined redisUse // at the end of the arrivals' window
	measured := make(chan struct{})
	go func() {
		defer close(measured)
		// The arrivals and 2 s for the last answers, before any first poll.
		time.Sleep(min(ramp+2*time.Second, harnessFirstPoll-time.Second))
		joined = redisFigures(t, client)
	}()
	code, s, stderr := runJSON(t, args...)
	<-measured
	end := redisFigures(t, client)
	joins, placing, total := joined.since(before), end.since(joined), end.since(before)
	f := s.FirstAnswer
	n := float64(max(f.Answered, 1))
	t.Logf("spike: %d arrivals over %v through 3 gateways (-spread request, JSON clients, -conns %s), one redis-server",
		arrivals, ramp, cmp.Or(os.Getenv("WAITROOM_SPIKE_CONNS"), "0"))
	t.Logf("every arrival answered: %v (%d answered, %d unanswered); exit %d, %d errors %v",
		f.AllOK, f.Answered, f.Unanswered, code, s.ErrorCount, s.Errors)
	t.Logf("first answer: p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms; %.0f joins/s answered",
		f.Latency.P50, f.Latency.P90, f.Latency.P99, f.Latency.Max, f.PerSecond)
	t.Logf("visitors: %+v; polls %d", s.Visitors, s.Kinds["poll"].Requests)
	for _, w := range []struct {
		name string
		u    redisUse
	}{{"joins (the arrivals' window: joins and ticks, no poll yet)", joins},
		{"placing (the first polls, which place the tickets, and ticks)", placing},
		{"whole run", total}} {
		above := w.u.cpu.Seconds() - idleRate*w.u.wall.Seconds()
		t.Logf("Redis, %s: %.3f s CPU = %.1f µs per arrival, %.1f µs above idle (%.0f%% of a core over %.1f s); %d commands = %.2f per arrival; %d scripts = %.2f per arrival, %.1f µs per arrival inside them",
			w.name, w.u.cpu.Seconds(), float64(w.u.cpu.Microseconds())/n, 1e6*above/n, 100*w.u.cpu.Seconds()/w.u.wall.Seconds(),
			w.u.wall.Seconds(), w.u.commands, float64(w.u.commands)/n, w.u.scripts, float64(w.u.scripts)/n,
			float64(w.u.inScripts.Microseconds())/n)
	}
	// A join the client gave up on may still have reached Redis, and one
	// answered after the window did so outside it, so the joins' window is
	// also read per join Redis ran: its scripts less the ticks' (3
	// gateways' admit, stats and override every tick of 1 s, and a touch).
	ticks := int64(3*4) * int64(joins.wall/time.Second)
	if ran := joins.scripts - ticks; ran > 0 {
		above := joins.cpu.Seconds() - idleRate*joins.wall.Seconds()
		t.Logf("Redis, per join it ran in the joins' window (%d scripts less about %d of the ticks): %.1f µs CPU (%.1f above idle), %.2f commands, %.2f scripts",
			joins.scripts, ticks, float64(joins.cpu.Microseconds())/float64(ran), 1e6*above/float64(ran),
			float64(joins.commands)/float64(ran), float64(joins.scripts)/float64(ran))
	}
	t.Logf("Redis commands in the joins' window: %v", joins.byCommand)
	t.Logf("Redis commands over the whole run: %v", total.byCommand)
	if !f.AllOK || f.Latency.Samples != int64(arrivals) {
		t.Errorf("not every arrival was answered: %+v; stderr:\n%s", f, stderr)
	}
	if s.Order.Inversions != 0 {
		t.Errorf("order: %+v", s.Order)
	}
	if total.commands == 0 || total.cpu <= 0 {
		t.Errorf("Redis's accounting saw nothing: %+v", total)
	}
}

// harnessRoom is a room a line forms in at once (100 inside, 6,000 a
// minute). Its page polls first after 20 s (page.refresh), so that the
// arrivals' window holds the joins and the ticks alone, and Redis's
// figures for it are the joins'; the first polls, which place the tickets,
// come after it, and are measured apart.
const harnessRoom = `{max_active: 100, admit_rate: 6000/m, join_limit: unlimited, page: {refresh: 20s, refresh_max: 30s}}`

// harnessRoomJoin is harnessRoom with the room's join setting:
// WAITROOM_SPIKE_JOIN (batched, the default, as a spike's room should
// run, or decide, the store call per join of a room without the setting).
func harnessRoomJoin(t *testing.T) string {
	join := cmp.Or(os.Getenv("WAITROOM_SPIKE_JOIN"), "batched")
	if join != "batched" && join != "decide" {
		t.Fatalf("WAITROOM_SPIKE_JOIN=%q: want batched or decide", join)
	}
	return strings.TrimSuffix(harnessRoom, "}") + ", join: " + join + "}"
}

// harnessFirstPoll is harnessRoom's page.refresh: the arrivals window must
// end before it.
const harnessFirstPoll = 20 * time.Second

// spikeEnv reads the run's size and the answer's time limit: WAITROOM_SPIKE_ARRIVALS (default 5000,
// at most 200,000) over WAITROOM_SPIKE_RAMP (default 2s, at most 17s), so
// that no run outlives about a minute and a half.
func spikeEnv(t *testing.T) (int, time.Duration, time.Duration) {
	// The ramp must end before the first polls, so the joins' window
	// holds only joins: at most harnessFirstPoll - 3s.
	// CI's run allows an answer 30 s, since the machine may be busy with
	// anything; a measured run (WAITROOM_SPIKE_ARRIVALS set) allows the 10 s
	// docs/scale.md's figures were taken with.
	arrivals, ramp, timeout := 5000, 2*time.Second, 30*time.Second
	if v := os.Getenv("WAITROOM_SPIKE_ARRIVALS"); v != "" {
		timeout = 10 * time.Second
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxVisitors {
			t.Fatalf("WAITROOM_SPIKE_ARRIVALS=%q: want 1 to %d", v, maxVisitors)
		}
		arrivals = n
	}
	if v := os.Getenv("WAITROOM_SPIKE_RAMP"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > harnessFirstPoll-3*time.Second {
			t.Fatalf("WAITROOM_SPIKE_RAMP=%q: want a duration up to %v", v, harnessFirstPoll-3*time.Second)
		}
		ramp = d
	}
	return arrivals, ramp, timeout
}

// pinRedis moves the server to the CPUs given (taskset's list, "0"), so
// that its CPU time is one core's and the gateways share the other.
func pinRedis(t *testing.T, client redis.UniversalClient, cpus string) {
	info, err := client.Info(context.Background(), "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	pid := infoField(info, "process_id")
	if out, err := exec.Command("taskset", "-cp", cpus, pid).CombinedOutput(); err != nil {
		t.Fatalf("taskset -cp %s %s: %v\n%s", cpus, pid, err, out)
	}
}

// redisUse is what Redis did: its CPU time (INFO cpu, used_cpu_sys plus
// used_cpu_user), every command it ran (INFO commandstats, which counts the
// commands scripts run too, and the script calls themselves, but not INFO)
// and the script calls among them.
type redisUse struct {
	at        time.Time
	wall      time.Duration
	cpu       time.Duration
	commands  int64
	scripts   int64
	inScripts time.Duration // commandstats' usec of the script calls: their run, not the I/O around them
	byCommand map[string]int64
}

func redisFigures(t *testing.T, client redis.UniversalClient) redisUse {
	ctx := context.Background()
	cpu, err := client.Info(ctx, "cpu").Result()
	if err != nil {
		t.Error(err)
		return redisUse{}
	}
	stats, err := client.Info(ctx, "commandstats").Result()
	if err != nil {
		t.Error(err)
		return redisUse{}
	}
	u := redisUse{at: time.Now(), byCommand: map[string]int64{}}
	for _, k := range []string{"used_cpu_sys", "used_cpu_user"} {
		s, _ := strconv.ParseFloat(infoField(cpu, k), 64)
		u.cpu += time.Duration(s * float64(time.Second))
	}
	for line := range strings.Lines(stats) {
		name, fields, ok := strings.Cut(strings.TrimSpace(line), ":")
		cmd, isCmd := strings.CutPrefix(name, "cmdstat_")
		if !ok || !isCmd || cmd == "info" {
			continue
		}
		parts := strings.Split(fields, ",")
		calls, _ := strings.CutPrefix(parts[0], "calls=")
		n, _ := strconv.ParseInt(calls, 10, 64)
		u.byCommand[cmd] = n
		u.commands += n
		if cmd == "evalsha" || cmd == "eval" || cmd == "fcall" {
			u.scripts += n
			if len(parts) > 1 {
				usec, _ := strings.CutPrefix(parts[1], "usec=")
				us, _ := strconv.ParseInt(usec, 10, 64)
				u.inScripts += time.Duration(us) * time.Microsecond
			}
		}
	}
	return u
}

// since is what Redis did from b to u.
func (u redisUse) since(b redisUse) redisUse {
	d := redisUse{at: u.at, wall: u.at.Sub(b.at), cpu: u.cpu - b.cpu, commands: u.commands - b.commands,
		scripts: u.scripts - b.scripts, inScripts: u.inScripts - b.inScripts, byCommand: map[string]int64{}}
	for k, n := range u.byCommand {
		if n -= b.byCommand[k]; n != 0 {
			d.byCommand[k] = n
		}
	}
	return d
}

// infoField is the value of "name:value" in an INFO answer.
func infoField(info, name string) string {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v
		}
	}
	return ""
}
