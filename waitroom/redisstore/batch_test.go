package redisstore

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
	"github.com/waitroom/waitroom/waitroom/storetest"
)

// Many visitors joining at once share round trips, and each still gets
// its own ticket and place: 300 joins, each then placed, leave a line of
// 300 distinct tickets. A script Redis lost (SCRIPT
// FLUSH) is loaded again for every call of a pipeline.
func TestPipeline_SharesRoundTripsAndKeepsEveryAnswer(t *testing.T) {
	srv := redistest.Start(t)
	client := srv.Client()
	ctx := context.Background()
	s := New(client)
	t.Cleanup(func() { _ = s.Close() })
	lim := waitroom.Limits{MaxActive: 0, AdmitBurst: 1, SessionTTL: time.Minute, AbandonAfter: time.Minute}
	const n = 300
	for round, flush := range []bool{false, true} {
		if flush {
			if err := client.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
		room := []string{"one", "two"}[round]
		var wg sync.WaitGroup
		positions := make([]int64, n)
		tickets := make([]int64, n)
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				v, d, err := storetest.Enter(ctx, s, room, lim, newID())
				if err == nil && d.State != waitroom.StateWaiting {
					err = errors.New("not waiting")
				}
				positions[i], tickets[i], errs[i] = d.Position, v.Ticket, err
			})
		}
		wg.Wait()
		seenTicket := map[int64]bool{}
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("round %d, visitor %d: %v", round, i, errs[i])
			}
			if positions[i] < 1 || positions[i] > n || seenTicket[tickets[i]] {
				t.Fatalf("round %d, visitor %d: position %d, ticket %d (seen: %v)", round, i, positions[i], tickets[i], seenTicket[tickets[i]])
			}
			seenTicket[tickets[i]] = true
		}
		if st, err := s.Stats(ctx, room); err != nil || st.Waiting != n {
			t.Fatalf("round %d: stats %+v, %v; want %d waiting", round, st, err, n)
		}
	}
	if sent, calls := s.pipe.sent.Load(), s.pipe.calls.Load(); sent >= calls || calls < 2*2*n {
		t.Errorf("%d Decide calls in %d round trips: none shared", calls, sent)
	}
}

// Close ends the workers; a Decide after it is refused, not left waiting.
func TestPipeline_Close(t *testing.T) {
	srv := redistest.Start(t)
	s := New(srv.Client())
	lim := waitroom.Limits{MaxActive: 1, AdmitBurst: 1, SessionTTL: time.Minute, AbandonAfter: time.Minute}
	if _, _, err := storetest.Enter(context.Background(), s, "r", lim, newID()); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := s.Decide(ctx, "r", lim, waitroom.Visitor{ID: newID()}, waitroom.JoinTicket); !errors.Is(err, waitroom.ErrClosed) {
		t.Errorf("Decide after Close: %v, want ErrClosed", err)
	}
}
