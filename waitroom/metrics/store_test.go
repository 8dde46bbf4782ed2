package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/memstore"
	"github.com/waitroom/waitroom/waitroom/metrics"
)

// call is one store call of the script, with the op and result the wrapper
// must record for it ("" for Close, which is not timed).
type call struct {
	name       string
	op, result string
	canceled   bool // run with a canceled context
	do         func(ctx context.Context, s waitroom.Store) (any, error)
}

func storeScript(ids []string) []call {
	decide := func(id string, join waitroom.Join) func(context.Context, waitroom.Store) (any, error) {
		return func(ctx context.Context, s waitroom.Store) (any, error) {
			return s.Decide(ctx, room, lim, waitroom.Visitor{ID: id}, join)
		}
	}
	release := func(id string) func(context.Context, waitroom.Store) (any, error) {
		return func(ctx context.Context, s waitroom.Store) (any, error) { return nil, s.Release(ctx, room, id) }
	}
	maxActive := 5
	calls := []call{
		{name: "look without joining", op: "decide", result: "ok", do: decide(ids[0], waitroom.JoinNone)},
		{name: "release unknown", op: "release", result: "ok", do: release("ghost")},
	}
	for i, id := range ids {
		calls = append(calls, call{name: fmt.Sprintf("join %d", i), op: "decide", result: "ok", do: decide(id, waitroom.JoinTicket)})
	}
	return append(calls,
		call{name: "poll", op: "decide", result: "ok", do: decide(ids[4], waitroom.JoinTicket)},
		call{name: "release inside", op: "release", result: "ok", do: release(ids[0])},
		call{name: "tick", op: "admit", result: "ok", do: func(ctx context.Context, s waitroom.Store) (any, error) {
			return s.Admit(ctx, room, lim)
		}},
		call{name: "admit n", op: "admit_n", result: "ok", do: func(ctx context.Context, s waitroom.Store) (any, error) {
			return s.AdmitN(ctx, room, lim, 2)
		}},
		call{name: "set override", op: "set_override", result: "ok", do: func(ctx context.Context, s waitroom.Store) (any, error) {
			return nil, s.SetOverride(ctx, room, waitroom.Override{MaxActive: &maxActive})
		}},
		call{name: "read override", op: "override", result: "ok", do: func(ctx context.Context, s waitroom.Store) (any, error) {
			return s.Override(ctx, room)
		}},
		call{name: "clear override", op: "clear_override", result: "ok", do: func(ctx context.Context, s waitroom.Store) (any, error) {
			return nil, s.ClearOverride(ctx, room)
		}},
		call{name: "stats", op: "stats", result: "ok", do: func(ctx context.Context, s waitroom.Store) (any, error) {
			return s.Stats(ctx, room)
		}},
		call{name: "ping", op: "ping", result: "ok", do: func(ctx context.Context, s waitroom.Store) (any, error) {
			return nil, s.Ping(ctx)
		}},
		call{name: "use a room", op: "use_room", result: "ok", do: useRoom("a")},
		call{name: "a room too many", op: "use_room", result: "ok", do: useRoom("b")},
		call{name: "create", op: "put_definition", result: "ok", do: putDefinition(waitroom.PutCreate)},
		call{name: "create again", op: "put_definition", result: "ok", do: putDefinition(waitroom.PutCreate)},
		call{name: "replace", op: "put_definition", result: "ok", do: putDefinition(waitroom.PutReplace)},
		call{name: "version", op: "definitions_version", result: "ok", do: func(ctx context.Context, s waitroom.Store) (any, error) {
			return s.DefinitionsVersion(ctx)
		}},
		call{name: "load", op: "load_definitions", result: "ok", do: func(ctx context.Context, s waitroom.Store) (any, error) {
			return s.LoadDefinitions(ctx)
		}},
		call{name: "delete", op: "delete_definition", result: "ok", do: deleteDefinition},
		call{name: "delete missing", op: "delete_definition", result: "ok", do: deleteDefinition},
		call{name: "visitor gone", op: "decide", result: "canceled", canceled: true, do: decide(ids[5], waitroom.JoinTicket)},
		call{name: "close", do: func(_ context.Context, s waitroom.Store) (any, error) { return nil, s.Close() }},
		call{name: "ping closed", op: "ping", result: "error", do: func(ctx context.Context, s waitroom.Store) (any, error) {
			return nil, s.Ping(ctx)
		}},
		call{name: "decide closed", op: "decide", result: "error", do: decide(ids[1], waitroom.JoinTicket)},
		call{name: "release closed", op: "release", result: "error", do: release(ids[1])},
		call{name: "override closed", op: "override", result: "error", do: func(ctx context.Context, s waitroom.Store) (any, error) {
			return s.Override(ctx, room)
		}},
	)
}

// useRoom uses a room of a template that holds one; ErrTooManyRooms, an
// expected answer, is an "ok".
func useRoom(name string) func(context.Context, waitroom.Store) (any, error) {
	return func(ctx context.Context, s waitroom.Store) (any, error) {
		return nil, s.UseRoom(ctx, "events", name, 1, time.Hour)
	}
}

// putDefinition puts room "pop-up"; ErrExists and ErrNotFound are "ok".
func putDefinition(mode waitroom.PutMode) func(context.Context, waitroom.Store) (any, error) {
	return func(ctx context.Context, s waitroom.Store) (any, error) {
		return s.PutDefinition(ctx, "pop-up", []byte(`{"max_active":5}`), mode)
	}
}

func deleteDefinition(ctx context.Context, s waitroom.Store) (any, error) {
	return s.DeleteDefinition(ctx, "pop-up", nil)
}

// TestStore_PassesResultsThrough runs one script against a bare memstore and
// a wrapped one on identical clocks: every result and error must be the same,
// and every call but Close must be timed under its op and result.
func TestStore_PassesResultsThrough(t *testing.T) {
	t.Parallel()
	ids := make([]string, 6)
	for i := range ids {
		ids[i] = waitroom.NewVisitorID()
	}
	bareClock, wrapClock := newClock(), newClock()
	bare := memstore.New(memstore.WithClock(bareClock.now))
	m := metrics.New()
	wrapped := metrics.Store(memstore.New(memstore.WithClock(wrapClock.now)), m)

	want := map[[2]string]uint64{}
	for _, c := range storeScript(ids) {
		ctx := t.Context()
		if c.canceled {
			var cancel context.CancelFunc
			ctx, cancel = context.WithCancel(ctx)
			cancel()
		}
		wantV, wantErr := c.do(ctx, bare)
		gotV, gotErr := c.do(ctx, wrapped)
		if !reflect.DeepEqual(gotV, wantV) || !errors.Is(gotErr, wantErr) || (gotErr == nil) != (wantErr == nil) {
			t.Errorf("%s: wrapped returned %+v, %v; bare %+v, %v", c.name, gotV, gotErr, wantV, wantErr)
		}
		if c.op != "" {
			want[[2]string{c.op, c.result}]++
		}
		bareClock.advance(time.Second)
		wrapClock.advance(time.Second)
	}

	s := scrapeOf(t, m.Handler())
	for _, f := range s["waitroom_store_duration_seconds"].GetMetric() {
		var key [2]string
		for _, lp := range f.GetLabel() {
			switch lp.GetName() {
			case "op":
				key[0] = lp.GetValue()
			case "result":
				key[1] = lp.GetValue()
			}
		}
		if got := f.GetHistogram().GetSampleCount(); got != want[key] {
			t.Errorf("store_duration{op=%q,result=%q}: count %d, want %d", key[0], key[1], got, want[key])
		}
		delete(want, key)
	}
	if len(want) > 0 {
		t.Errorf("no series for %v", want)
	}
}

// TestStore_Unwrap: a caller can still reach the concrete store.
func TestStore_Unwrap(t *testing.T) {
	t.Parallel()
	mem := memstore.New()
	st := metrics.Store(mem, metrics.New())
	u, ok := st.(interface{ Unwrap() waitroom.Store })
	if !ok {
		t.Fatalf("%T has no Unwrap", st)
	}
	if u.Unwrap() != waitroom.Store(mem) {
		t.Errorf("Unwrap = %v, want the memstore", u.Unwrap())
	}
}

// TestStore_NilMetrics: without metrics the store is not wrapped at all.
func TestStore_NilMetrics(t *testing.T) {
	t.Parallel()
	mem := memstore.New()
	if st := metrics.Store(mem, nil); st != waitroom.Store(mem) {
		t.Errorf("Store(s, nil) = %T, want s itself", st)
	}
}

// TestStore_As: waitroom.As finds the store under any number of wrappers,
// or the wrapper itself when it is what is asked for, and nothing in a nil
// store.
func TestStore_As(t *testing.T) {
	t.Parallel()
	mem := memstore.New()
	outer := metrics.Store(metrics.Store(mem, metrics.New()), metrics.New())
	if got, ok := waitroom.As[*memstore.Store](outer); !ok || got != mem {
		t.Errorf("As[*memstore.Store] = %p, %v; want the memstore", got, ok)
	}
	if got, ok := waitroom.As[waitroom.Line](outer); !ok || got != waitroom.Line(outer) {
		t.Errorf("As[Line] = %T, %v; want the outer wrapper", got, ok)
	}
	if _, ok := waitroom.As[interface{ Claim() }](outer); ok {
		t.Error("As found an ability no store in the chain has")
	}
	if _, ok := waitroom.As[*memstore.Store](nil); ok {
		t.Error("As found a store in nil")
	}
}
