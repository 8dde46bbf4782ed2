package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
	"github.com/waitroom/waitroom/waitroom/webhook"
)

var _ webhook.Claimer = (*redisstore.Store)(nil)

func TestClaim_FirstWinsUntilTTL(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	prefix := freshPrefix()
	s := newStore(t, srv.NewClient(), prefix)
	ctx := context.Background()
	claim := func(key string, ttl time.Duration) bool {
		t.Helper()
		ok, err := s.Claim(ctx, key, ttl)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !claim("msg_a", 300*time.Millisecond) || claim("msg_a", time.Minute) || !claim("msg_b", time.Minute) {
		t.Fatal("want the first claim of each key taken and the second refused")
	}
	key := "{" + prefix + ":claim:msg_a}"
	pttl, err := srv.Client().PTTL(ctx, key).Result()
	if err != nil || pttl <= 0 || pttl > 300*time.Millisecond {
		t.Errorf("PTTL %s = %v, %v; want the first claim's lifetime, not extended by the second", key, pttl, err)
	}
	time.Sleep(350 * time.Millisecond)
	if !claim("msg_a", time.Minute) {
		t.Error("a claim past its lifetime was not taken again")
	}
	other := newStore(t, srv.NewClient(), freshPrefix())
	if ok, err := other.Claim(ctx, "msg_b", time.Minute); !ok || err != nil {
		t.Errorf("another prefix's claim = %v, %v; want its own", ok, err)
	}
}

// TestClaim_OneWinnerAmongInstances: three stores, as three gateways, race
// for the same keys; each key has exactly one winner.
func TestClaim_OneWinnerAmongInstances(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	prefix := freshPrefix()
	stores := make([]*redisstore.Store, 3)
	for i := range stores {
		stores[i] = newStore(t, srv.NewClient(), prefix)
	}
	const keys, callers = 20, 12
	var wins [keys]atomic.Int32
	var wg sync.WaitGroup
	for c := range callers {
		wg.Go(func() {
			for k := range keys {
				ok, err := stores[c%3].Claim(context.Background(), fmt.Sprintf("msg_%d", k), time.Minute)
				if err != nil {
					t.Error(err)
				}
				if ok {
					wins[k].Add(1)
				}
			}
		})
	}
	wg.Wait()
	for k := range wins {
		if n := wins[k].Load(); n != 1 {
			t.Errorf("key %d taken %d times, want once", k, n)
		}
	}
}

func TestClaim_RefusesKeysAndTTLsOutOfBounds(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	prefix := freshPrefix()
	s := newStore(t, srv.NewClient(), prefix)
	tests := []struct {
		key  string
		ttl  time.Duration
		want string
	}{
		{"", time.Minute, `claiming "": key must be 1 to 512 bytes, got 0`},
		{strings.Repeat("k", 513), time.Minute, "key must be 1 to 512 bytes, got 513"},
		{"msg_a", 0, `claiming "msg_a": ttl must be at least 1ms, got 0s`},
		{"msg_a", 500 * time.Microsecond, "ttl must be at least 1ms, got 500µs"},
		{"msg_a", -time.Second, "ttl must be at least 1ms, got -1s"},
	}
	for _, tc := range tests {
		ok, err := s.Claim(context.Background(), tc.key, tc.ttl)
		if ok || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Claim(%.20q, %v) = %v, %v; want an error with %q", tc.key, tc.ttl, ok, err, tc.want)
		}
	}
	if n, err := srv.Client().Keys(context.Background(), "{"+prefix+":*").Result(); err != nil || len(n) != 0 {
		t.Errorf("keys after refused claims: %v, %v", n, err)
	}
}

func TestClaim_StoreClosedOrDown(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	s := newStore(t, srv.NewClient(), "wr")
	closed := newStore(t, srv.NewClient(), "wr")
	_ = closed.Close()
	if _, err := closed.Claim(context.Background(), "msg_a", time.Minute); !errors.Is(err, waitroom.ErrClosed) {
		t.Errorf("closed store: %v, want ErrClosed", err)
	}
	srv.Stop()
	if _, err := s.Claim(context.Background(), "msg_a", time.Minute); !errors.Is(err, waitroom.ErrUnavailable) {
		t.Errorf("Redis down: %v, want ErrUnavailable", err)
	}
}

// TestClaim_Cluster: claims spread over a cluster's slots, each key's own.
func TestClaim_Cluster(t *testing.T) {
	t.Parallel()
	addrs := redistest.StartCluster(t, 3)
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, DialTimeout: 10 * time.Second, ReadTimeout: 10 * time.Second})
	s := newStore(t, client, "wr")
	for k := range 30 {
		key := webhook.MessageID(fmt.Sprint(k))
		first, err1 := s.Claim(context.Background(), key, time.Minute)
		second, err2 := s.Claim(context.Background(), key, time.Minute)
		if !first || second || err1 != nil || err2 != nil {
			t.Fatalf("key %s: %v, %v then %v, %v; want taken once", key, first, err1, second, err2)
		}
	}
}

// TestClaim_ThreeDispatchersSendOnce: three gateway instances, each with
// its own dispatcher and store on one Redis, notice the same queue.started
// events at about the same moment; the site gets each exactly once, signed.
func TestClaim_ThreeDispatchersSendOnce(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	prefix := freshPrefix()
	secret := "whsec_" + strings.Repeat("c2VjcmV0", 4) // 24 bytes
	key, err := webhook.ParseSecret(secret)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := map[string]int{} // webhook-id -> deliveries
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
		if err := webhook.Verify(key, r.Header, body, time.Minute); err != nil {
			t.Errorf("site: %v", err)
		}
		mu.Lock()
		got[r.Header.Get(webhook.HeaderID)]++
		mu.Unlock()
	}))
	t.Cleanup(site.Close)
	ep, err := webhook.Config{URL: site.URL, Events: []string{"queue.started"}, Secret: secret}.Build()
	if err != nil {
		t.Fatal(err)
	}
	ds := make([]*webhook.Dispatcher, 3)
	for i := range ds {
		ds[i] = webhook.New(webhook.Options{Endpoints: []webhook.Endpoint{ep}, Claimer: newStore(t, srv.NewClient(), prefix)})
	}
	const epochs = 10
	var wg sync.WaitGroup
	for _, d := range ds {
		wg.Go(func() {
			for e := range epochs {
				d.Send(webhook.Event{
					Type: webhook.QueueStarted, ID: webhook.Key(webhook.QueueStarted, "concert", fmt.Sprint(e)),
					Data: webhook.QueueStartedData{Room: "concert", Waiting: int64(e)},
				})
			}
		})
	}
	wg.Wait()
	for _, d := range ds {
		if err := d.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != epochs {
		t.Errorf("site got %d distinct events, want %d", len(got), epochs)
	}
	for id, n := range got {
		if n != 1 {
			t.Errorf("%s delivered %d times, want once", id, n)
		}
	}
}
