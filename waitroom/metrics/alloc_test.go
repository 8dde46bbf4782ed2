//go:build !race

package metrics_test

import (
	"errors"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/memstore"
	"github.com/waitroom/waitroom/waitroom/metrics"
)

// TestMetrics_HotPathsDoNotAllocate: once a room or upstream has been seen,
// recording costs no allocation. (Not under -race, which allocates itself.)
func TestMetrics_HotPathsDoNotAllocate(t *testing.T) {
	m := metrics.New()
	errDown := errors.New("down")
	for name, f := range map[string]func(){
		"Request":        func() { m.Request(room, "admitted") },
		"RequestNoRoom":  func() { m.Request("", "bypass") },
		"Upstream":       func() { m.Upstream("shop", 200, time.Millisecond) },
		"StoreOp":        func() { m.StoreOp("decide", time.Millisecond, errDown) },
		"Tick":           func() { m.Tick(room, waitroom.Admitted{Admitted: 1, Expired: 1}) },
		"Admitted":       func() { m.Admitted(room) },
		"Released":       func() { m.Released(room, "leave") },
		"TicketRejected": func() { m.TicketRejected("expired") },
		"Reload":         func() { m.Reload("ok") },
	} {
		f() // first sight resolves the series
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: %v allocations per call, want 0", name, n)
		}
	}
}

// TestStore_TimingDoesNotAllocate: the wrapper adds two clock reads and an
// atomic add, nothing the GC sees (memstore's Ping allocates nothing itself).
func TestStore_TimingDoesNotAllocate(t *testing.T) {
	st := metrics.Store(memstore.New(), metrics.New())
	ctx := t.Context()
	if n := testing.AllocsPerRun(100, func() { _ = st.Ping(ctx) }); n != 0 {
		t.Errorf("wrapped Ping: %v allocations per call, want 0", n)
	}
}
