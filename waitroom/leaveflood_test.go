package waitroom_test

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
	"github.com/waitroom/waitroom/waitroom/storetest"
)

// downConn fails every write while down is set: a store with no master.
type downConn struct {
	net.Conn
	down *atomic.Bool
}

func (c downConn) Write(b []byte) (int, error) {
	if c.down.Load() {
		return 0, errors.New("no master (staged)")
	}
	return c.Conn.Write(b)
}

// While the store has no master, one visitor's leave repeated 4096 times
// (one valid cookie, POST /.waitroom/leave in a loop) keeps one entry: the
// site's own release kept before it is still applied once the store is
// back, and the session it ended holds no slot.
func TestRooms_LeaveFloodKeepsTheSitesRelease(t *testing.T) {
	srv := redistest.Start(t)
	var down atomic.Bool
	client := redis.NewClient(&redis.Options{Network: "unix", Addr: srv.Addr(), MaxRetries: -1,
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if down.Load() {
				return nil, errors.New("no master (staged)")
			}
			c, err := net.Dial(network, addr)
			return downConn{c, &down}, err
		}})
	rooms, store, _, ad := repairRooms(t, client)
	ctx := context.Background()
	lim := testRoom("concert", 1).Limits
	v1, d1, err := storetest.Enter(ctx, store, "concert", lim, waitroom.NewVisitorID())
	if err != nil || d1.State != waitroom.StateAdmitted {
		t.Fatalf("first visitor: %+v, %v", d1, err)
	}
	v1.Until, v1.Placed, v1.Seen = d1.Until, true, time.Now()
	if d, err := store.Decide(ctx, "concert", lim, v1, waitroom.JoinNone); err != nil || d.State != waitroom.StateAdmitted {
		t.Fatalf("the session's first use: %+v %v", d, err)
	}
	down.Store(true)
	if err := rooms.Release(ctx, "concert", v1.ID, "upstream", time.Time{}); err != nil {
		t.Fatalf("the site's release: %v", err)
	}
	attacker := waitroom.NewVisitorID()
	for i := 0; i < 4096; i++ {
		if err := rooms.Release(ctx, "concert", attacker, "leave", time.Time{}); err != nil {
			t.Fatalf("leave %d: %v", i, err)
		}
	}
	down.Store(false)
	deadline := time.Now().Add(30 * time.Second)
	for client.Ping(ctx).Err() != nil && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	for i := 0; i < 3; i++ {
		ad.Tick(ctx)
	}
	st, err := store.Stats(ctx, "concert")
	if err != nil || st.Active != 0 {
		t.Errorf("after the outage: active %d, %v; want 0 (the site's release kept and applied)", st.Active, err)
	}
}
