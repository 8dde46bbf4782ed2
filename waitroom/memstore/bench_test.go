package memstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/memstore"
)

const benchLine = 100_000

// benchLimits admit nobody, so the line stays as long as it was made.
var benchLimits = waitroom.Limits{MaxActive: 0, SessionTTL: 10 * time.Minute, AbandonAfter: time.Hour}

// lineOf returns a store whose room "r" has n visitors waiting, and them.
func lineOf(b *testing.B, n int) (*memstore.Store, []waitroom.Visitor) {
	b.Helper()
	s := memstore.New()
	b.Cleanup(func() { _ = s.Close() })
	ctx := context.Background()
	vs := make([]waitroom.Visitor, n)
	for i := range vs {
		vs[i].ID = waitroom.NewVisitorID()
		d, err := s.Decide(ctx, "r", benchLimits, vs[i], waitroom.JoinTicket)
		if err != nil || d.State != waitroom.StateWaiting {
			b.Fatalf("join %d: %+v, %v", i, d, err)
		}
		vs[i].Ticket = d.Ticket
	}
	return s, vs
}

// BenchmarkMemStore_Decide is the hot path: a waiting visitor polls, with
// 100k in line. Visitors are taken in a scattered order so the caches see
// what a real line's polls do to them.
func BenchmarkMemStore_Decide(b *testing.B) {
	s, vs := lineOf(b, benchLine)
	ctx := context.Background()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i = (i + 7919) % len(vs) // a prime stride visits every one
		d, err := s.Decide(ctx, "r", benchLimits, vs[i], waitroom.JoinTicket)
		if err != nil || d.State != waitroom.StateWaiting {
			b.Fatalf("poll: %+v, %v", d, err)
		}
	}
}

// BenchmarkMemStore_DecideAdmitted is an admitted visitor's request.
func BenchmarkMemStore_DecideAdmitted(b *testing.B) {
	s := memstore.New()
	defer s.Close()
	ctx := context.Background()
	lim := waitroom.Limits{MaxActive: 1, SessionTTL: 10 * time.Minute, AbandonAfter: time.Hour}
	v := waitroom.Visitor{ID: waitroom.NewVisitorID()}
	b.ReportAllocs()
	for b.Loop() {
		if d, err := s.Decide(ctx, "r", lim, v, waitroom.JoinTicket); err != nil || d.State != waitroom.StateAdmitted {
			b.Fatalf("request: %+v, %v", d, err)
		}
	}
}

// BenchmarkMemStore_Join is a newcomer taking a ticket behind 100k.
func BenchmarkMemStore_Join(b *testing.B) {
	s, _ := lineOf(b, benchLine)
	ctx := context.Background()
	ids := make([]string, 1<<16)
	for i := range ids {
		ids[i] = waitroom.NewVisitorID()
	}
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		v := waitroom.Visitor{ID: ids[i%len(ids)]}
		i++
		if _, err := s.Decide(ctx, "r", benchLimits, v, waitroom.JoinTicket); err != nil {
			b.Fatal(err)
		}
		if i%len(ids) == 0 {
			b.StopTimer()
			for _, id := range ids {
				_ = s.Release(ctx, "r", id)
			}
			b.StartTimer()
		}
	}
}

// BenchmarkMemStore_Admit is a tick that moves 100 visitors in from the
// head of a 100k line.
func BenchmarkMemStore_Admit(b *testing.B) {
	s, vs := lineOf(b, benchLine)
	ctx := context.Background()
	lim := benchLimits
	lim.SessionTTL = time.Nanosecond // the previous tick's batch is gone by the next
	lim.MaxActive = 100
	next := 0
	b.ReportAllocs()
	for b.Loop() {
		a, err := s.Admit(ctx, "r", lim)
		if err != nil {
			b.Fatal(err)
		}
		if next += a.Admitted; next > len(vs)-100 {
			b.StopTimer()
			s, vs = lineOf(b, benchLine)
			next = 0
			b.StartTimer()
		}
	}
}
