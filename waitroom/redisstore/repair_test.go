package redisstore_test

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// The repairs of a partial data loss (doc.go, "Repairs"). What a promoted
// replica holds is staged faithfully: every key of the room is dumped
// (with its time to live) at one moment, work goes on, and the keys are
// put back as they were, the keys made since deleted: the writes since
// are lost, the rest (the seed among it) stays. A new replication id is
// staged by a real promotion (REPLICAOF, then REPLICAOF NO ONE).

// snapshot is the room's keys as DUMP gave them, with their PTTL.
type snapshot map[string]struct {
	dump string
	pttl time.Duration
}

func roomKeyNames(tb testing.TB, c redis.UniversalClient, prefix string) []string {
	tb.Helper()
	keys, err := c.Keys(context.Background(), "{"+prefix+":concert}*").Result()
	if err != nil {
		tb.Fatal(err)
	}
	return keys
}

func takeSnapshot(tb testing.TB, c redis.UniversalClient, prefix string) snapshot {
	tb.Helper()
	ctx := context.Background()
	snap := snapshot{}
	for _, k := range roomKeyNames(tb, c, prefix) {
		d, err := c.Dump(ctx, k).Result()
		if err != nil {
			tb.Fatal(err)
		}
		ttl, err := c.PTTL(ctx, k).Result()
		if err != nil {
			tb.Fatal(err)
		}
		snap[k] = struct {
			dump string
			pttl time.Duration
		}{d, ttl}
	}
	return snap
}

// rewind puts the room's keys back as snap holds them (only those named,
// when only is given), deleting the others.
func rewind(tb testing.TB, c redis.UniversalClient, prefix string, snap snapshot, only ...string) {
	tb.Helper()
	ctx := context.Background()
	picked := func(k string) bool {
		if len(only) == 0 {
			return true
		}
		for _, o := range only {
			if strings.HasSuffix(k, "}:"+o) {
				return true
			}
		}
		return false
	}
	for _, k := range roomKeyNames(tb, c, prefix) {
		if _, ok := snap[k]; !ok && picked(k) {
			c.Del(ctx, k)
		}
	}
	for k, v := range snap {
		if !picked(k) {
			continue
		}
		ttl := max(v.pttl, 0)
		if err := c.RestoreReplace(ctx, k, ttl, v.dump).Err(); err != nil {
			tb.Fatal(err)
		}
	}
}

// repairLimits: nobody admitted (max 0) unless set, places and sessions
// that outlast the test, a recovery grace of a minute.
func repairLimits(maxActive int) waitroom.Limits {
	lim := limits(maxActive)
	lim.RecoveryGrace = time.Minute
	return lim
}

// polled is v as its next poll presents it: placed, seen now.
func polled(v waitroom.Visitor) waitroom.Visitor {
	v.Placed, v.Seen = true, time.Now()
	return v
}

// A counter behind the tickets: the joins since the snapshot are lost. A
// newcomer through an instance that saw them (Visitor.Known) gets a
// number past them, counting them ahead as pending; their holders come
// back to their places by number; nobody's position grows.
func TestRepair_CounterBehindTheTickets(t *testing.T) {
	srv := redistest.Start(t)
	s := newStore(t, srv.NewClient(), "wr")
	c := srv.Client()
	lim := repairLimits(0)
	a1, a2 := join(t, s, lim, waitroom.StateWaiting), join(t, s, lim, waitroom.StateWaiting)
	snap := takeSnapshot(t, c, "wr")
	b1, b2 := join(t, s, lim, waitroom.StateWaiting), join(t, s, lim, waitroom.StateWaiting)
	rewind(t, c, "wr", snap)

	nv := waitroom.Visitor{ID: visitorID(), Issued: time.Now(), Seen: time.Now(), Known: b2.Ticket}
	d, err := s.Decide(context.Background(), "concert", lim, nv, waitroom.JoinTicket)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Repaired || d.Ticket <= b2.Ticket || d.Position != 5 {
		t.Fatalf("newcomer told of ticket %d: %+v; want repaired, a number past it, position 5 (the two lost ahead)", b2.Ticket, d)
	}
	nv.Ticket = d.Ticket
	for i, v := range []waitroom.Visitor{b1, b2} {
		d := decide(t, s, lim, polled(v), false)
		if d.State != waitroom.StateWaiting || d.Restored != waitroom.RestoreWaiting || d.Ticket != v.Ticket || d.Position != int64(3+i) {
			t.Errorf("lost place %d back: %+v, want restored at %d", v.Ticket, d, 3+i)
		}
	}
	if d := decide(t, s, lim, nv, false); d.Position != 5 || d.Line != 5 {
		t.Errorf("the newcomer placed: %d of %d, want 5 of 5 (its position never grew)", d.Position, d.Line)
	}
	for i, v := range []waitroom.Visitor{a1, a2} {
		if d := decide(t, s, lim, polled(v), false); d.Position != int64(i+1) || d.Restored != waitroom.RestoreNone {
			t.Errorf("kept place %d: %+v, want %d", v.Ticket, d, i+1)
		}
	}
	// Told again, the store has moved past: no second repair.
	again := waitroom.Visitor{ID: visitorID(), Issued: time.Now(), Known: b2.Ticket}
	if d, err := s.Decide(context.Background(), "concert", lim, again, waitroom.JoinTicket); err != nil || d.Repaired || d.Ticket <= nv.Ticket {
		t.Errorf("a later newcomer: %+v, %v; want no repair, a number after the first's", d, err)
	}
	if st, err := s.Stats(context.Background(), "concert"); err != nil || st.Repairs != 1 {
		t.Errorf("stats: %+v, %v; want 1 repair", st, err)
	}
}

// A waiting visitor whose ticket is above the counter (the counter's
// write lost, its place kept) is found on its own poll, the hot path, and
// the counter moves past it.
func TestRepair_WaitingAboveTheCounter(t *testing.T) {
	srv := redistest.Start(t)
	s := newStore(t, srv.NewClient(), "wr")
	c := srv.Client()
	lim := repairLimits(0)
	join(t, s, lim, waitroom.StateWaiting)
	snap := takeSnapshot(t, c, "wr")
	b := join(t, s, lim, waitroom.StateWaiting)
	rewind(t, c, "wr", snap, "meta")
	d := decide(t, s, lim, polled(b), false)
	if !d.Repaired || d.State != waitroom.StateWaiting || d.Position != 2 || d.Ticket != b.Ticket {
		t.Fatalf("poll above the counter: %+v, want repaired, waiting at 2", d)
	}
	n := join(t, s, lim, waitroom.StateWaiting)
	if n.Ticket <= b.Ticket {
		t.Errorf("next ticket %d, not past %d", n.Ticket, b.Ticket)
	}
	if d := decide(t, s, lim, polled(n), false); d.Position != 3 {
		t.Errorf("the next newcomer at %d, want 3", d.Position)
	}
}

// admitted is v as an admitted visitor's request presents it.
func admitted(v waitroom.Visitor, d waitroom.Decision) waitroom.Visitor {
	if d.Ticket != 0 { // a session found running answers none (the gate keeps the cookie's)
		v.Ticket = d.Ticket
	}
	v.Until, v.Placed, v.Seen = d.Until, true, time.Now()
	if v.Entered.IsZero() {
		v.Entered = v.Seen // as the gate seals a session (enteredAt)
	}
	return v
}

// An admitted ticket whose session vanished in a real promotion comes
// back inside while max_active allows, whoever comes first: a newcomer
// that nothing told of the loss, about to go in at once, finds the new
// master itself, and the repair's hold keeps it out. Never more inside
// than max_active.
func TestRepair_AdmittedTicketWhoseSessionVanished(t *testing.T) {
	for _, first := range []string{"returning", "newcomer"} {
		t.Run(first+" first", func(t *testing.T) {
			ctx := context.Background()
			lim := repairLimits(2)
			sa, sb := promoted(t, func(sa *redisstore.Store) {
				join(t, sa, lim, waitroom.StateAdmitted)
				if _, err := sa.Admit(ctx, "concert", lim); err != nil { // records A's replication id
					t.Fatal(err)
				}
			})
			// Lost: the second visitor's join and admission.
			v2, d2, err := enter(ctx, sa, "concert", lim, visitorID())
			if err != nil || d2.State != waitroom.StateAdmitted {
				t.Fatalf("second visitor on A: %+v, %v", d2, err)
			}
			back := admitted(v2, d2)
			newcomer := func() waitroom.Decision {
				// Through an instance that saw nothing of the lost join.
				_, d, err := enter(ctx, sb, "concert", lim, visitorID())
				if err != nil {
					t.Fatal(err)
				}
				return d
			}
			if first == "newcomer" {
				// Its first call repairs (Stats.Repairs below), its second
				// places it.
				if d := newcomer(); d.State != waitroom.StateWaiting {
					t.Errorf("newcomer on the new master: %+v, want held in line", d)
				}
			}
			d := decide(t, sb, lim, back, false)
			if d.State != waitroom.StateAdmitted || d.Restored != waitroom.RestoreInside {
				t.Errorf("admitted visitor back: %+v, want inside again", d)
			}
			if first == "returning" {
				if !d.Repaired {
					t.Errorf("admitted visitor back: %+v, want the repair (its ticket is past the counter)", d)
				}
				if d := newcomer(); d.State == waitroom.StateAdmitted {
					t.Errorf("newcomer after it: %+v, want held", d)
				}
			}
			if st, err := sb.Stats(ctx, "concert"); err != nil || st.Active != 2 || st.Repairs != 1 {
				t.Errorf("stats: active %d, repairs %d, %v; want 2 (max_active), 1", st.Active, st.Repairs, err)
			}
		})
	}
}

// startTCP starts a redis-server on a loopback TCP port (replication
// needs one) and returns a client of it.
func startTCP(tb testing.TB) (string, *redis.Client) {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		redistest.Require(tb, fmt.Errorf("%w: %v", redistest.ErrNoBinary, err))
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", tb.TempDir(), "--repl-diskless-sync-delay", "0")
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: time.Minute})
	tb.Cleanup(func() { _ = c.Close() })
	waitUntil(tb, 20*time.Second, func() bool { return c.Ping(context.Background()).Err() == nil })
	return addr, c
}

// waitUntil polls ok until it holds, failing the test past within.
func waitUntil(tb testing.TB, within time.Duration, ok func() bool) {
	tb.Helper()
	for deadline := time.Now().Add(within); !ok(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("not within %v", within)
		}
	}
}

func infoField(tb testing.TB, c *redis.Client, field string) string {
	tb.Helper()
	info, err := c.Info(context.Background(), "replication").Result()
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	return ""
}

// A real promotion: B replicates A, is promoted (REPLICAOF NO ONE), and A
// goes on taking writes that B never gets: a placement, a release, an
// admission. On B, the visitor whose place and session vanished is found
// on its own request (a miss under a new replication id), and put back at
// the front, since the slot is held by the session whose release was
// lost; the tick on B does not repair twice; once the gateway applies the
// release again (Rooms does, repair.go), the visitor goes in after the
// repair's hold. Never more inside than max_active.
func TestRepair_NewMasterReleaseAndPlaceVanished(t *testing.T) {
	addrA, ca := startTCP(t)
	_, cb := startTCP(t)
	ctx := context.Background()
	host, port, _ := strings.Cut(addrA, ":")
	if err := cb.SlaveOf(ctx, host, port).Err(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 30*time.Second, func() bool { return infoField(t, cb, "master_link_status") == "up" })
	sa := redisstore.New(ca)
	sb := redisstore.New(cb)
	lim := repairLimits(1)
	v1, d1, err := enter(ctx, sa, "concert", lim, visitorID())
	if err != nil || d1.State != waitroom.StateAdmitted {
		t.Fatalf("first visitor: %+v, %v", d1, err)
	}
	v2 := waitroom.Visitor{ID: visitorID(), Issued: time.Now(), Seen: time.Now()}
	d2, err := sa.Decide(ctx, "concert", lim, v2, waitroom.JoinTicket)
	if err != nil || d2.State != waitroom.StateWaiting || d2.Placed {
		t.Fatalf("second visitor's number: %+v, %v", d2, err)
	}
	v2.Ticket = d2.Ticket
	if _, err := sa.Admit(ctx, "concert", lim); err != nil { // records A's replication id
		t.Fatal(err)
	}
	waitUntil(t, 30*time.Second, func() bool {
		return infoField(t, ca, "master_repl_offset") == infoField(t, cb, "master_repl_offset")
	})
	if err := cb.SlaveOf(ctx, "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	// The writes B never gets.
	if d, err := sa.Decide(ctx, "concert", lim, v2, waitroom.JoinNone); err != nil || !d.Placed {
		t.Fatalf("second visitor placed on A: %+v, %v", d, err)
	}
	if err := sa.Release(ctx, "concert", v1.ID); err != nil {
		t.Fatal(err)
	}
	if a, err := sa.Admit(ctx, "concert", lim); err != nil || a.Admitted != 1 {
		t.Fatalf("tick on A: %+v, %v", a, err)
	}
	in := decide(t, sa, lim, polled(v2), false)
	if in.State != waitroom.StateAdmitted {
		t.Fatalf("second visitor on A: %+v, want admitted", in)
	}

	back := admitted(v2, in)
	d := decide(t, sb, lim, back, false)
	if !d.Repaired || d.State != waitroom.StateWaiting || d.Restored != waitroom.RestoreWaiting || d.Position != 1 || d.Ticket != v2.Ticket {
		t.Fatalf("on B, the visitor whose place and session vanished: %+v; want repaired, first in line", d)
	}
	if a, err := sb.Admit(ctx, "concert", lim); err != nil || a.Repaired || a.Admitted != 0 {
		t.Errorf("tick on B: %+v, %v; want no second repair, nobody in (the lost release holds the slot)", a, err)
	}
	if err := sb.Release(ctx, "concert", v1.ID); err != nil {
		t.Fatalf("the release applied again: %v", err)
	}
	waitUntil(t, 30*time.Second, func() bool {
		a, err := sb.Admit(ctx, "concert", lim)
		return err == nil && a.Admitted == 1
	})
	if d := decide(t, sb, lim, polled(v2), false); d.State != waitroom.StateAdmitted {
		t.Errorf("after the hold: %+v, want admitted", d)
	}
	if st, err := sb.Stats(ctx, "concert"); err != nil || st.Active != 1 || st.Repairs != 1 {
		t.Errorf("stats on B: active %d, repairs %d, %v; want 1 and 1", st.Active, st.Repairs, err)
	}
}

// A tick on a new master repairs before it admits anyone: the sessions
// whose admissions were lost get the slots back first.
func TestRepair_TickOnNewMaster(t *testing.T) {
	ctx := context.Background()
	lim := repairLimits(0)
	sa, sb := promoted(t, func(sa *redisstore.Store) {
		join(t, sa, lim, waitroom.StateWaiting)
		if _, err := sa.Admit(ctx, "concert", lim); err != nil {
			t.Fatal(err)
		}
	})
	lim.MaxActive = 5
	a, err := sb.Admit(ctx, "concert", lim)
	if err != nil || !a.Repaired || a.Admitted != 0 {
		t.Fatalf("first tick on the new master: %+v, %v; want repaired, nobody in during the hold", a, err)
	}
	if a, err := sb.Admit(ctx, "concert", lim); err != nil || a.Repaired {
		t.Errorf("second tick: %+v, %v; want no second repair", a, err)
	}
	if a, err := sa.Admit(ctx, "concert", lim); err != nil || a.Repaired {
		t.Errorf("tick on the old master, still its own: %+v, %v", a, err)
	}
}

// promoted starts A and B, B replicating A; before runs on A, B catches
// up and is promoted (REPLICAOF NO ONE); it returns stores on A (which
// goes on taking writes B never gets) and on B.
func promoted(tb testing.TB, before func(sa *redisstore.Store)) (*redisstore.Store, *redisstore.Store) {
	tb.Helper()
	ctx := context.Background()
	addrA, ca := startTCP(tb)
	_, cb := startTCP(tb)
	host, port, _ := strings.Cut(addrA, ":")
	if err := cb.SlaveOf(ctx, host, port).Err(); err != nil {
		tb.Fatal(err)
	}
	// A master changes its replication id when its first replica
	// attaches: the room's must be recorded after that.
	waitUntil(tb, 30*time.Second, func() bool { return infoField(tb, cb, "master_link_status") == "up" })
	sa, sb := redisstore.New(ca), redisstore.New(cb)
	before(sa)
	waitUntil(tb, 30*time.Second, func() bool {
		return infoField(tb, ca, "master_repl_offset") == infoField(tb, cb, "master_repl_offset")
	})
	if err := cb.SlaveOf(ctx, "NO", "ONE").Err(); err != nil {
		tb.Fatal(err)
	}
	return sa, sb
}

// metaSeq is the room's counter, read from its meta key.
func metaSeq(t *testing.T, c redis.UniversalClient) int64 {
	t.Helper()
	for _, k := range roomKeyNames(t, c, "wr") {
		if strings.HasSuffix(k, ":meta") {
			n, err := c.HGet(context.Background(), k, "seq").Int64()
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no meta key")
	return 0
}

// A gateway's Known more than MEND_MAX past the counter (a rival
// deployment's ticket sealed with the same keys, seen once) repairs
// nothing, and keeps a waiting poll on the fast path: it still carries
// the room's Progress (the slow path carries none), so anchors go on.
func TestRepair_KnownPastMendMaxKeepsPollsFast(t *testing.T) {
	srv := redistest.Start(t)
	s := newStore(t, srv.NewClient(), "wr")
	lim := repairLimits(0)
	v := join(t, s, lim, waitroom.StateWaiting)
	d := decide(t, s, lim, polled(v), false)
	if d.Progress.Epoch == 0 {
		t.Fatalf("a normal poll: %+v, want the room's progress", d)
	}
	pv := polled(v)
	pv.Known = metaSeq(t, srv.Client()) + 1<<30
	d2 := decide(t, s, lim, pv, false)
	if d2.Repaired || d2.Progress != d.Progress || d2.Position != d.Position {
		t.Errorf("a poll told of a ticket 2^30 past the counter: %+v; want no repair and the progress %+v", d2, d.Progress)
	}
}

// Tickets minted (by a holder of the cookie keys) just under MEND_MAX
// past the counter, one after another under one master: the first
// repairs, the rest move nothing, so the counter (and K_SEEN, K_PLACED
// with it) moves at most MEND_MAX plus one jump per replication id.
func TestRepair_MintedTicketsMoveTheCounterOncePerMaster(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	s := newStore(t, srv.NewClient(), "wr")
	c := srv.Client()
	lim := repairLimits(0)
	join(t, s, lim, waitroom.StateWaiting)
	start := metaSeq(t, c)
	for i := 0; i < 8; i++ {
		v := waitroom.Visitor{ID: visitorID(), Ticket: metaSeq(t, c) + 1<<20, Placed: true, Issued: time.Now(), Seen: time.Now()}
		if _, err := s.Decide(ctx, "concert", lim, v, waitroom.JoinNone); err != nil {
			t.Fatal(err)
		}
	}
	if moved := metaSeq(t, c) - start; moved > 1<<20+2048 {
		t.Errorf("8 minted tickets moved the counter %d, want at most 2^20 and a jump", moved)
	}
	if st, err := s.Stats(ctx, "concert"); err != nil || st.Repairs != 1 {
		t.Errorf("repairs %d, %v; want 1", st.Repairs, err)
	}
}

// Stats.Counter is the last number handed out: right after a repair's
// jump it is the number the jump started from, not the JUMP skipped past
// it (an instance that told those to an old master still taking writes,
// in a split brain, would have them counted there as pending places);
// once a number is handed out past the jump, that number.
func TestRepair_CounterInStatsSkipsTheJump(t *testing.T) {
	srv := redistest.Start(t)
	s := newStore(t, srv.NewClient(), "wr")
	c := srv.Client()
	lim := repairLimits(0)
	join(t, s, lim, waitroom.StateWaiting)
	snap := takeSnapshot(t, c, "wr")
	b := join(t, s, lim, waitroom.StateWaiting)
	rewind(t, c, "wr", snap)
	if d := decide(t, s, lim, polled(b), false); !d.Repaired {
		t.Fatalf("the lost place back: %+v, want a repair", d)
	}
	st, err := s.Stats(context.Background(), "concert")
	if err != nil || st.Counter != b.Ticket || st.Repairs != 1 {
		t.Fatalf("stats after the repair: counter %d, repairs %d, %v; want counter %d (the jump's start)", st.Counter, st.Repairs, err, b.Ticket)
	}
	n := join(t, s, lim, waitroom.StateWaiting)
	if st, err := s.Stats(context.Background(), "concert"); err != nil || st.Counter != n.Ticket || n.Ticket <= b.Ticket+1 {
		t.Errorf("stats after a join past the jump: counter %d, %v; want the newcomer's %d, past the jump from %d", st.Counter, err, n.Ticket, b.Ticket)
	}
}
