package waitroom_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
	"github.com/waitroom/waitroom/waitroom/storetest"
)

// repairObs counts failovers noticed, releases, and restores by kind.
type repairObs struct {
	outageCount
	failovers, released, restoredReleases atomic.Int64
}

func (o *repairObs) Failover()               { o.failovers.Add(1) }
func (o *repairObs) Released(string, string) { o.released.Add(1) }
func (o *repairObs) Restored(_, kind string) {
	if kind == "release" {
		o.restoredReleases.Add(1)
	}
}

func repairRooms(t *testing.T, client redis.UniversalClient) (*waitroom.Rooms, *redisstore.Store, *repairObs, *waitroom.Admitter) {
	t.Helper()
	store := redisstore.New(client)
	t.Cleanup(func() { _ = store.Close(); _ = client.Close() })
	obs := &repairObs{}
	rooms := waitroom.NewRooms(waitroom.RoomsOptions{Store: store, Observer: obs})
	r := testRoom("concert", 1)
	r.Limits.RecoveryGrace = time.Minute
	rooms.Apply(waitroom.RoomsConfig{Rooms: []waitroom.Room{r}})
	ad, _ := rooms.Admitter("concert")
	return rooms, store, obs, ad
}

// A release the store took, then lost in a failover (staged: the room's
// keys put back as they were before it), is applied again by the tick
// that notices the repair: the session it ended does not hold its slot
// until it runs out. The failover is counted once, and the release as a
// restore of kind "release".
func TestRooms_ReleaseLostInAFailoverIsAppliedAgain(t *testing.T) {
	srv := redistest.Start(t)
	rooms, store, obs, ad := repairRooms(t, srv.NewClient())
	ctx := context.Background()
	lim := testRoom("concert", 1).Limits
	lim.RecoveryGrace = time.Minute
	v1, d1, err := storetest.Enter(ctx, store, "concert", lim, waitroom.NewVisitorID())
	if err != nil || d1.State != waitroom.StateAdmitted {
		t.Fatalf("first visitor: %+v, %v", d1, err)
	}
	ad.Tick(ctx)
	c := srv.Client()
	dumps := snapshotRoom(t, c)
	if err := rooms.Release(ctx, "concert", v1.ID, "upstream", time.Time{}); err != nil {
		t.Fatal(err)
	}
	v2, d2, err := storetest.Enter(ctx, store, "concert", lim, waitroom.NewVisitorID())
	if err != nil || d2.State != waitroom.StateAdmitted {
		t.Fatalf("second visitor: %+v, %v", d2, err)
	}
	// The failover: everything since the snapshot is gone.
	failover(t, c, dumps)
	v2.Until, v2.Placed, v2.Seen, v2.Entered = d2.Until, true, time.Now(), time.Now() // as the gate seals it
	d, err := store.Decide(ctx, "concert", lim, v2, waitroom.JoinTicket)
	if err != nil || !d.Repaired || d.State != waitroom.StateWaiting || d.Position != 1 {
		t.Fatalf("second visitor back: %+v, %v; want repaired, first in line (the lost release holds the slot)", d, err)
	}
	ad.Tick(ctx)
	st, err := store.Stats(ctx, "concert")
	if err != nil || st.Active != 0 {
		t.Errorf("after the tick: active %d, %v; want 0 (the release applied again)", st.Active, err)
	}
	if n := obs.failovers.Load(); n != 1 {
		t.Errorf("failovers counted %d, want 1", n)
	}
	if n := obs.restoredReleases.Load(); n != 1 {
		t.Errorf("releases restored %d, want 1", n)
	}
	ad.Tick(ctx)
	if n := obs.failovers.Load(); n != 1 {
		t.Errorf("failovers counted %d after another tick, want still 1", n)
	}
}

// The replay after a repair ends only the sessions the kept releases
// were for: a visitor released, back in line and admitted again (a new
// session, the same visitor ID) before a failover that lost nothing of
// that, keeps its new session when the tick that notices the repair
// applies the kept releases again. The release the failover did lose is
// shown applied in TestRooms_ReleaseLostInAFailoverIsAppliedAgain.
func TestRooms_ReplayedReleaseSparesALaterSession(t *testing.T) {
	srv := redistest.Start(t)
	rooms, store, obs, ad := repairRooms(t, srv.NewClient())
	ctx := context.Background()
	lim := testRoom("concert", 1).Limits
	lim.RecoveryGrace = time.Minute
	v1, d1, err := storetest.Enter(ctx, store, "concert", lim, waitroom.NewVisitorID())
	if err != nil || d1.State != waitroom.StateAdmitted {
		t.Fatalf("first visitor: %+v, %v", d1, err)
	}
	ad.Tick(ctx)
	if err := rooms.Release(ctx, "concert", v1.ID, "upstream", time.Time{}); err != nil {
		t.Fatal(err)
	}
	// Back as a newcomer with the same ID (an account id, or its cookie's
	// Visitor): let in at once, a new session.
	again, d, err := storetest.Enter(ctx, store, "concert", lim, v1.ID)
	if err != nil || d.State != waitroom.StateAdmitted {
		t.Fatalf("the same visitor back: %+v, %v; want admitted again", d, err)
	}
	again.Until, again.Entered = d.Until, time.Now() // as the gate seals it
	c := srv.Client()
	dumps := snapshotRoom(t, c)
	// A join after the snapshot, which the failover loses: its ticket,
	// above the counter then, is how the store finds the repair.
	late, dl, err := storetest.Enter(ctx, store, "concert", lim, waitroom.NewVisitorID())
	if err != nil || dl.State != waitroom.StateWaiting {
		t.Fatalf("a visitor joining a full room: %+v, %v", dl, err)
	}
	failover(t, c, dumps)
	late.Seen = time.Now()
	if d, err := store.Decide(ctx, "concert", lim, late, waitroom.JoinNone); err != nil || !d.Repaired {
		t.Fatalf("the lost join back: %+v, %v; want the room repaired", d, err)
	}
	ad.Tick(ctx) // notices the repair and replays the kept release
	if n := obs.failovers.Load(); n != 1 {
		t.Fatalf("failovers counted %d, want 1: the replay did not run", n)
	}
	if d, err := store.Decide(ctx, "concert", lim, again, waitroom.JoinNone); err != nil || d.State != waitroom.StateAdmitted {
		t.Errorf("the visitor's later session after the replay: %+v, %v; want still admitted", d, err)
	}
	if st, err := store.Stats(ctx, "concert"); err != nil || st.Active != 1 || st.Released != 1 {
		t.Errorf("stats %+v, %v; want 1 inside, 1 released (the first session only)", st, err)
	}
	if n := obs.restoredReleases.Load(); n != 0 {
		t.Errorf("releases restored %d, want 0 (the store had it)", n)
	}
}

// A release that reaches the gateway while the store cannot answer (no
// master) is not lost: Release keeps it and says so with no error, and
// the first tick that reaches the store applies it.
func TestRooms_ReleaseWithoutMasterIsKept(t *testing.T) {
	srv := redistest.Start(t)
	client := redis.NewClient(&redis.Options{Network: "unix", Addr: srv.Addr(), DialTimeout: 300 * time.Millisecond,
		ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond, MaxRetries: -1})
	rooms, store, obs, ad := repairRooms(t, client)
	ctx := context.Background()
	lim := testRoom("concert", 1).Limits
	v1, d1, err := storetest.Enter(ctx, store, "concert", lim, waitroom.NewVisitorID())
	if err != nil || d1.State != waitroom.StateAdmitted {
		t.Fatalf("first visitor: %+v, %v", d1, err)
	}
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	err = rooms.Release(ctx, "concert", v1.ID, "upstream", time.Time{})
	if rerr := srv.Resume(); rerr != nil {
		t.Fatal(rerr)
	}
	if err != nil {
		t.Fatalf("release while the store cannot answer: %v, want it kept", err)
	}
	if n := obs.released.Load(); n != 0 {
		t.Errorf("released counted %d before the store took it", n)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ad.Tick(ctx)
		if st, err := store.Stats(ctx, "concert"); err == nil && st.Active == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the kept release was never applied")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := obs.released.Load(); n != 1 {
		t.Errorf("released counted %d, want 1", n)
	}
}

// An instance that admitted nobody itself still tells a new master the
// room's highest admitted ticket, learned from its ticks (Stats.HighestAdmitted):
// the admissions another instance made before a failover lost them are
// put back at its first call, so the positions read through it do not
// count them. Before, only the instance that admitted them knew, and the
// line stood high by their number until it called.
func TestRooms_EveryInstanceKnowsTheRoomsAdmissions(t *testing.T) {
	srv := redistest.Start(t)
	_, store, _, ad := repairRooms(t, srv.NewClient()) // this instance's room: max_active 1
	ctx := context.Background()
	lim := testRoom("concert", 1).Limits
	lim.RecoveryGrace = time.Minute
	if _, d, err := storetest.Enter(ctx, store, "concert", lim, waitroom.NewVisitorID()); err != nil || d.State != waitroom.StateAdmitted {
		t.Fatalf("first visitor: %+v, %v", d, err)
	}
	line := make([]waitroom.Visitor, 3)
	for i := range line {
		v := waitroom.Visitor{ID: waitroom.NewVisitorID(), Issued: time.Now()}
		d, err := store.Decide(ctx, "concert", lim, v, waitroom.JoinTicket)
		if err == nil {
			v.Ticket, v.Placed = d.Ticket, true
			d, err = store.Decide(ctx, "concert", lim, waitroom.Visitor{ID: v.ID, Ticket: v.Ticket, Issued: v.Issued}, waitroom.JoinNone)
		}
		if err != nil || d.State != waitroom.StateWaiting || d.Position != int64(i+1) {
			t.Fatalf("visitor %d in line: %+v, %v", i, d, err)
		}
		line[i] = v
	}
	c := srv.Client()
	dumps := snapshotRoom(t, c)
	// Another instance, with more slots, admits the first two in line.
	more := lim
	more.MaxActive = 3
	if a, err := store.Admit(ctx, "concert", more); err != nil || a.Admitted != 2 || a.Highest != line[1].Ticket {
		t.Fatalf("the other instance's tick: %+v, %v; want 2 admitted up to ticket %d", a, err, line[1].Ticket)
	}
	ad.Tick(ctx) // this one admits nobody (its room is full) and reads the stats
	// The failover: everything since the snapshot is gone.
	failover(t, c, dumps)
	ad.Tick(ctx) // its first call to the new master
	v := line[2]
	d, err := store.Decide(ctx, "concert", lim, waitroom.Visitor{ID: v.ID, Ticket: v.Ticket, Placed: true, Issued: v.Issued, Seen: time.Now()}, waitroom.JoinNone)
	if err != nil || d.State != waitroom.StateWaiting || d.Position != 1 {
		t.Fatalf("the last in line after the failover: %+v, %v; want waiting first (the two lost admissions put back inside)", d, err)
	}
	if st, err := store.Stats(ctx, "concert"); err != nil || st.Active != 3 {
		t.Errorf("inside after the repair: %d, %v; want 3", st.Active, err)
	}
}

// snapshotRoom dumps the room's keys, for failover to put back.
func snapshotRoom(t *testing.T, c redis.UniversalClient) map[string]string {
	t.Helper()
	ctx := context.Background()
	dumps := map[string]string{}
	for _, k := range c.Keys(ctx, "{wr:concert}*").Val() {
		dumps[k] = c.Dump(ctx, k).Val()
	}
	return dumps
}

// failover stages one: the room's keys go back to the snapshot, and
// everything written since is gone.
func failover(t *testing.T, c redis.UniversalClient, dumps map[string]string) {
	t.Helper()
	ctx := context.Background()
	for _, k := range c.Keys(ctx, "{wr:concert}*").Val() {
		c.Del(ctx, k)
	}
	for k, d := range dumps {
		if err := c.RestoreReplace(ctx, k, 0, d).Err(); err != nil {
			t.Fatal(err)
		}
	}
}
