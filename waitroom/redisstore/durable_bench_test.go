package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/redisstore"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

// BenchmarkDurable is what WAIT costs the writes it follows, against a
// real master with a real replica on this machine: a tick (admit.lua
// admitting one visitor) and a release, each with wait_replicas 0 and 1.
// The joins that feed them run with the timer stopped.
//
//	go test -run '^$' -bench BenchmarkDurable -benchtime 2000x -count 5 ./waitroom/redisstore/
func BenchmarkDurable(b *testing.B) {
	master := redistest.Start(b)
	startReplica(b, master)
	ctx := context.Background()
	for _, wait := range []int{0, 1} {
		s := redisstore.New(master.NewClient(), redisstore.WithKeyPrefix(freshPrefix()), redisstore.WithWait(wait, 50*time.Millisecond))
		b.Cleanup(func() { _ = s.Close() })
		if err := s.ClearOverride(ctx, "concert"); err != nil { // learns the replica
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("tick/wait_replicas=%d", wait), func(b *testing.B) {
			lim := limits(0)
			for b.Loop() {
				b.StopTimer()
				lim.MaxActive = 0
				join(b, s, lim, waitroom.StateWaiting)
				lim.MaxActive = 1 << 30
				b.StartTimer()
				if a, err := s.AdmitN(ctx, "concert", lim, 1); err != nil || a.Admitted != 1 {
					b.Fatalf("AdmitN: %+v, %v", a, err)
				}
			}
		})
		b.Run(fmt.Sprintf("release/wait_replicas=%d", wait), func(b *testing.B) {
			lim := limits(1 << 30)
			for b.Loop() {
				b.StopTimer()
				v := join(b, s, lim, waitroom.StateAdmitted)
				b.StartTimer()
				if err := s.Release(ctx, "concert", v.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
		if n := s.WaitShortfalls(); n != 0 {
			b.Errorf("wait_replicas=%d: %d shortfalls with a live replica", wait, n)
		}
	}
}
