package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// BenchmarkPollsAtScale: a line of WAITROOM_SCALE_WAITING visitors (default
// 100,000) on one Redis, polling through three gateways in turn, as pages
// whose tickets were anchored by an earlier poll do. It reports the Redis
// commands and scripts per poll (INFO commandstats), Redis's CPU time per
// poll and as a share of one core, and the poll latencies.
//
//	go test -run '^$' -bench PollsAtScale -benchtime 200000x ./cmd/waitroom/
//	WAITROOM_SCALE_WAITING=1000000 go test -run '^$' -bench PollsAtScale -benchtime 60s -timeout 30m ./cmd/waitroom/
func BenchmarkPollsAtScale(b *testing.B) {
	n := 100_000
	if s := os.Getenv("WAITROOM_SCALE_WAITING"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1000 {
			b.Fatalf("WAITROOM_SCALE_WAITING=%q: want a number of at least 1000", s)
		}
	}
	srv := redistest.Start(b)
	_, site := newUpstream(b)
	room := "    max_active: 0\n    tick: 1s\n    abandon_after: 10m\n    join_limit: unlimited"
	cfg := redisConfig(site.URL, room, srv.Addr(), "closed", "scale")
	cfg = strings.Replace(cfg, ", dial_timeout: 200ms, read_timeout: 200ms, write_timeout: 200ms", "", 1)
	var bases []string
	for range 3 {
		_, base := startGateway(b, cfg)
		bases = append(bases, base)
	}
	cookies := seedLine(b, srv, n, "scale")[200:]
	c := benchClient()
	rc := &redisCmds{srv: srv}
	// The line is made once; the polls run as the sub-benchmark, b.N of them.
	b.Run(fmt.Sprintf("waiting=%d", n), func(b *testing.B) {
		cpu0 := redisCPU(b, srv)
		start := time.Now()
		rc.measure(b, func() {
			load(b, c, 0, func(i int) *http.Request {
				r, _ := http.NewRequest(http.MethodGet, bases[i%3]+"/.waitroom/status?room=concert", nil)
				r.Header.Set("Accept", "application/json")
				r.Header.Set("Cookie", cookies[rand.IntN(len(cookies))])
				return r
			}, wantStatus(200, "waiting"))
		})
		cpu := redisCPU(b, srv) - cpu0
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "redis-cpu-µs/op")
		b.ReportMetric(100*cpu.Seconds()/time.Since(start).Seconds(), "redis-cpu-%")
	})
}

// seedLine puts n visitors in line straight through the store (under the
// key prefix), as many at once as the pipeline takes, and returns their
// cookies in line order, those beyond the first 200 places each anchored
// at its place: what their pages hold after a poll.
func seedLine(b testing.TB, srv *redistest.Server, n int, prefix string) []string {
	ctx := context.Background()
	s := redisstore.New(srv.NewClient(), redisstore.WithKeyPrefix(prefix))
	defer s.Close()
	lim := waitroom.Limits{MaxActive: 0, AdmitBurst: 1, SessionTTL: 10 * time.Minute, AbandonAfter: 10 * time.Minute}
	type placed struct {
		id     string
		ticket int64
	}
	line := make([]placed, n)
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	for w := range 64 {
		wg.Go(func() {
			for i := w; i < n; i += 64 {
				v := waitroom.Visitor{ID: waitroom.NewVisitorID(), Issued: time.Now(), Seen: time.Now()}
				d, err := s.Decide(ctx, "concert", lim, v, waitroom.JoinTicket)
				if err == nil {
					v.Ticket = d.Ticket
					d, err = s.Decide(ctx, "concert", lim, v, waitroom.JoinNone)
				}
				if err == nil && (d.State != waitroom.StateWaiting || !d.Placed) {
					err = fmt.Errorf("visitor %d: %+v", i, d)
				}
				if err != nil {
					select {
					case errs <- err:
					default:
					}
					return
				}
				line[i] = placed{v.ID, v.Ticket}
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	st, err := s.Stats(ctx, "concert")
	if err != nil || st.Waiting != int64(n) {
		b.Fatalf("seeded line: %+v, %v; want %d waiting", st, err, n)
	}
	slices.SortFunc(line, func(x, y placed) int { return int(x.ticket - y.ticket) })
	tickets := testTickets(b)
	now := time.Now().Unix()
	var cookies []string
	for i, p := range line {
		var anchor waitroom.Anchor
		if i >= 200 {
			anchor = waitroom.Anchor{Position: int64(1 + i), At: now, Progress: st.Progress()}
		}
		value, err := tickets.Encode(waitroom.Ticket{Version: 1, Visitor: p.id, Room: "concert", Number: p.ticket,
			Issued: now, Start: int64(1 + i), Sealed: now, Anchor: anchor})
		if err != nil {
			b.Fatal(err)
		}
		cookies = append(cookies, tickets.CookieName("concert")+"="+value)
	}
	return cookies
}

// redisCPU is the CPU time the Redis server used so far.
func redisCPU(b testing.TB, srv *redistest.Server) time.Duration {
	info, err := srv.Client().Info(context.Background(), "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var total float64
	for _, line := range strings.Split(info, "\n") {
		for _, k := range []string{"used_cpu_sys:", "used_cpu_user:"} {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), k); ok {
				f, _ := strconv.ParseFloat(v, 64)
				total += f
			}
		}
	}
	return time.Duration(total * float64(time.Second))
}
