package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// A least-privilege ACL user, as Redis's own docs shape one (+@all
// -@dangerous), may not run INFO, even inside a script. The store reads
// the replication id with INFO to notice a failover; without it every
// tick failed and nobody was admitted. Now the tick runs, and a failover
// is found by the counter and the gateways' hints alone.
func TestACL_LeastPrivilegeUserAdmits(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	admin := srv.Client()
	if err := admin.Do(ctx, "ACL", "SETUSER", "gw", "on", ">gw-pass", "~*", "&*", "+@all", "-@dangerous").Err(); err != nil {
		t.Fatal(err)
	}
	client := redis.NewClient(&redis.Options{Addr: srv.Addr(), Network: "unix", Username: "gw", Password: "gw-pass",
		DialTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: time.Minute})
	if err := client.Do(ctx, "INFO", "replication").Err(); err == nil {
		t.Fatal("the user may run INFO: the test stages nothing")
	}
	s := newStore(t, client, "acl")
	lim := limits(1)
	a := join(t, s, lim, waitroom.StateAdmitted)
	b := join(t, s, lim, waitroom.StateWaiting)
	if _, err := s.Admit(ctx, "concert", lim); err != nil {
		t.Fatalf("a tick as the least-privilege user: %v", err)
	}
	if err := s.Release(ctx, "concert", a.ID); err != nil {
		t.Fatalf("release: %v", err)
	}
	adm, err := s.Admit(ctx, "concert", lim)
	if err != nil {
		t.Fatalf("a second tick: %v", err)
	}
	if adm.Admitted != 1 {
		t.Fatalf("the tick after a's release admitted %d, want b", adm.Admitted)
	}
	if d := decide(t, s, lim, b, false); d.State != waitroom.StateAdmitted {
		t.Fatalf("b: %v, want admitted", d.State)
	}
}
