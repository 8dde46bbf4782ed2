package redisstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// shortClient is a gateway's client (redisstore.NewClient) of srv with a
// read timeout of 200ms, for tests that outlast it on purpose.
func shortClient(t *testing.T, srv *redistest.Server) redis.UniversalClient {
	t.Helper()
	cfg := redisstore.DefaultConfig()
	cfg.Addrs = []string{srv.Addr()}
	cfg.ReadTimeout, cfg.WriteTimeout, cfg.DialTimeout = "200ms", "200ms", "5s"
	c, err := redisstore.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// warm fills c's pool with three live connections, so a resend would find
// one at once (a fresh dial to a frozen server times out in its HELLO,
// before the command is written, and would hide a resend).
func warm(t *testing.T, c redis.UniversalClient) {
	t.Helper()
	ctx := context.Background()
	held := make([]*redis.Conn, 3)
	for i := range held {
		held[i] = c.(*redis.Client).Conn()
		if err := held[i].Ping(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, cn := range held {
		_ = cn.Close() // back to the pool
	}
	if idle := c.PoolStats().IdleConns; idle < 3 {
		t.Fatalf("%d idle connections in the pool, want 3", idle)
	}
}

// frozenScripts freezes srv, runs calls (each may run scripts) while it
// is frozen past the client's read timeout, thaws it, and returns how many
// scripts Redis ran for them once thawed, and the calls' errors.
func frozenScripts(t *testing.T, srv *redistest.Server, client redis.UniversalClient, calls ...func() error) (int64, []error) {
	t.Helper()
	warm(t, client)
	if err := srv.Client().ConfigResetStat(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = call()
		}()
	}
	wg.Wait()
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	// The frozen server runs what its sockets hold as soon as it thaws;
	// the count is stable once a later command has been answered.
	if err := srv.Client().Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	n, _ := scriptStats(t, srv.Client())
	return n, errs
}

// TestClient_ScriptNotResentAfterTimeout: a script whose reply does not
// come within the read timeout (Redis frozen) may have run; go-redis
// would send it again (MaxRetries 1, shouldRetry on a timeout), running a
// join twice. Through redisstore.NewClient's client it runs once, alone
// and in a pipeline.
func TestClient_ScriptNotResentAfterTimeout(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	client := shortClient(t, srv)
	s := newStore(t, client, freshPrefix())
	ctx := context.Background()
	const room = "r"
	line(t, s, room, 1) // loads the script, so no NOSCRIPT round
	join := func() error {
		_, err := s.Decide(ctx, room, limits(0), waitroom.Visitor{ID: visitorID(), Issued: time.Now(), Seen: time.Now()}, waitroom.JoinTicket)
		return err
	}

	ran, errs := frozenScripts(t, srv, client, join)
	if errs[0] == nil {
		t.Fatal("a join on a frozen Redis succeeded")
	}
	if ran != 1 {
		t.Errorf("one join on a frozen Redis ran %d scripts once thawed, want 1 (sent once)", ran)
	}

	// A pipeline of scripts (batch.go sends concurrent decides as one):
	// go-redis resends a whole pipeline after any timeout. Each script
	// here counts its runs in a key.
	const n = 3
	count := redis.NewScript(`return redis.call('INCR', KEYS[1])`)
	if err := count.Load(ctx, srv.Client()).Err(); err != nil {
		t.Fatal(err)
	}
	key := freshPrefix() + ":runs"
	ran, errs = frozenScripts(t, srv, client, func() error {
		_, err := client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for range n {
				count.EvalSha(ctx, p, []string{key})
			}
			return nil
		})
		return err
	})
	if errs[0] == nil {
		t.Fatal("a pipeline on a frozen Redis succeeded")
	}
	runs, err := srv.Client().Get(ctx, key).Int64()
	if err != nil || runs != n || ran != n {
		t.Errorf("a pipeline of %d scripts on a frozen Redis: %d runs counted, %d scripts ran (%v), want %d", n, runs, ran, err, n)
	}

	// The store serves again, and a script Redis forgot is loaded again
	// (EVALSHA's NOSCRIPT, then EVAL): that is no resend.
	if err := srv.Client().ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := join(); err != nil {
		t.Fatalf("a join after SCRIPT FLUSH: %v", err)
	}
}

// TestClient_RestartedRedisServesFirstCall: a Redis that restarted left
// the pool's connections dead; the first call after it succeeds, on a new
// connection (the pool checks a connection before handing it out), so
// refusing to resend scripts costs nothing there.
func TestClient_RestartedRedisServesFirstCall(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	client := shortClient(t, srv)
	s := newStore(t, client, freshPrefix())
	line(t, s, "r", 1)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, _, err := enter(context.Background(), s, "r", limits(0), visitorID()); err != nil {
			t.Fatalf("call %d after a restart: %v", i+1, err)
		}
	}
}
