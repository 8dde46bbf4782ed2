package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/waitroom/waitroom/waitroom"
)

// version reads DefinitionsVersion through every instance, checks that
// they all agree, and returns it.
func (e *env) version() int64 {
	e.t.Helper()
	var first int64
	for i, s := range e.stores {
		v, err := s.DefinitionsVersion(context.Background())
		if err != nil {
			e.t.Fatalf("DefinitionsVersion on instance %d: %v", i, err)
		}
		if i == 0 {
			first = v
		} else if v != first {
			e.t.Fatalf("instance %d reads version %d, instance 0 %d", i, v, first)
		}
	}
	return first
}

// definitions loads the definitions through every instance, checks that
// they all agree with want and with the version, and returns one copy.
func (e *env) definitions(want map[string]string) waitroom.Definitions {
	e.t.Helper()
	var d waitroom.Definitions
	for i, s := range e.stores {
		got, err := s.LoadDefinitions(context.Background())
		if err != nil {
			e.t.Fatalf("LoadDefinitions on instance %d: %v", i, err)
		}
		bodies := make(map[string]string, len(got.Bodies))
		for name, body := range got.Bodies {
			bodies[name] = string(body)
		}
		if !maps.Equal(bodies, want) {
			e.t.Fatalf("instance %d loads %v, want %v", i, bodies, want)
		}
		d = got
	}
	if v := e.version(); d.Version != v {
		e.t.Fatalf("LoadDefinitions at version %d, DefinitionsVersion %d", d.Version, v)
	}
	return d
}

// put runs PutDefinition on the next instance.
func (e *env) put(name, body string, mode waitroom.PutMode) (int64, error) {
	return e.store().PutDefinition(context.Background(), name, []byte(body), mode)
}

// testDefinitions: definitions put through one instance are read by every
// other; a name is created once (ErrExists after), replaced or deleted
// only while it exists (ErrNotFound else); every write moves the version
// on, every refusal leaves it; what a store keeps and returns is its own.
func testDefinitions(t *testing.T, e *env) {
	if v := e.version(); v != 0 {
		t.Fatalf("version before any write %d, want 0", v)
	}
	e.definitions(map[string]string{})
	prev := int64(0)
	moved := func(v int64, err error, what string) {
		t.Helper()
		if err != nil || v <= prev || e.version() != v {
			t.Fatalf("%s: version %d, %v; want one above %d, read by every instance", what, v, err, prev)
		}
		prev = v
	}
	refused := func(v int64, err, want error, what string) {
		t.Helper()
		if !errors.Is(err, want) || e.version() != prev {
			t.Fatalf("%s: %d, %v; want %v and the version left at %d", what, v, err, want, prev)
		}
	}
	v, err := e.put("pop-up", `{"max_active":5}`, waitroom.PutCreate)
	moved(v, err, "create")
	v, err = e.put("pop-up", `{"max_active":9}`, waitroom.PutCreate)
	refused(v, err, waitroom.ErrExists, "create again")
	v, err = e.put("pop-up", `{"max_active":7}`, waitroom.PutReplace)
	moved(v, err, "replace")
	v, err = e.put("missing", `{}`, waitroom.PutReplace)
	refused(v, err, waitroom.ErrNotFound, "replace a missing one")
	v, err = e.store().DeleteDefinition(context.Background(), "missing", nil)
	refused(v, err, waitroom.ErrNotFound, "delete a missing one")

	body := []byte(`{"max_active":1}`)
	v, err = e.store().PutDefinition(context.Background(), "sale", body, waitroom.PutCreate)
	moved(v, err, "create another")
	body[0] = 'X' // the caller's slice, after the put
	d := e.definitions(map[string]string{"pop-up": `{"max_active":7}`, "sale": `{"max_active":1}`})
	d.Bodies["sale"][0] = 'Y' // the slice a load returned
	d.Bodies["gone"] = nil
	e.definitions(map[string]string{"pop-up": `{"max_active":7}`, "sale": `{"max_active":1}`})

	// A delete that names the body it read removes only that body: a room
	// written again since (by another instance) stays.
	v, err = e.store().DeleteDefinition(context.Background(), "pop-up", []byte(`{"max_active":9}`))
	refused(v, err, waitroom.ErrChanged, "delete a body written over since")
	v, err = e.store().DeleteDefinition(context.Background(), "pop-up", []byte(`{"max_active":7}`))
	moved(v, err, "delete the body read")
	e.definitions(map[string]string{"sale": `{"max_active":1}`})
	v, err = e.store().DeleteDefinition(context.Background(), "pop-up", []byte(`{"max_active":7}`))
	refused(v, err, waitroom.ErrNotFound, "delete a body deleted already")
	v, err = e.put("pop-up", `{"max_active":7}`, waitroom.PutCreate)
	moved(v, err, "create again to delete")
	v, err = e.store().DeleteDefinition(context.Background(), "pop-up", nil)
	moved(v, err, "delete")
	e.definitions(map[string]string{"sale": `{"max_active":1}`})
	v, err = e.put("pop-up", `{}`, waitroom.PutCreate)
	moved(v, err, "create again after the delete")
}

// testDefinitionsAtOnce: writes from every instance at once each get a
// version of their own, the last of which every instance then reads, and
// of creates of one name exactly one wins.
func testDefinitionsAtOnce(t *testing.T, e *env) {
	const writers = 12
	var mu sync.Mutex
	var versions []int64
	won := 0
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			v, err := e.put(fmt.Sprint("room-", i), "{}", waitroom.PutCreate)
			if err != nil {
				t.Errorf("create room-%d: %v", i, err)
				return
			}
			mu.Lock()
			versions = append(versions, v)
			mu.Unlock()
			v, err = e.put("contested", fmt.Sprint(i), waitroom.PutCreate)
			if err != nil && !errors.Is(err, waitroom.ErrExists) {
				t.Errorf("create contested: %v", err)
			}
			if err == nil {
				mu.Lock()
				versions = append(versions, v)
				won++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.Sort(versions)
	if len(slices.Compact(versions)) != writers+1 || won != 1 {
		t.Fatalf("versions %v, %d creates of one name won; want %d distinct versions and one winner", versions, won, writers+1)
	}
	if v := e.version(); v != versions[len(versions)-1] {
		t.Fatalf("version after the writes %d, want the last write's %d", v, versions[len(versions)-1])
	}
}

// testDefinitionBounds: a name of 1 to 128 bytes not beginning with '#'
// (the Redis store keeps its own fields under such names) and a body up to
// 64 KiB are taken; anything else is refused with an error that is no
// sentinel, and changes nothing.
func testDefinitionBounds(t *testing.T, e *env) {
	ctx := context.Background()
	ok := []struct{ name, body string }{
		{"a", ""},
		{strings.Repeat("n", 128), "{}"},
		{"big", strings.Repeat("b", 64<<10)},
	}
	for _, c := range ok {
		if _, err := e.put(c.name, c.body, waitroom.PutCreate); err != nil {
			t.Fatalf("create %.16q with %d bytes: %v", c.name, len(c.body), err)
		}
	}
	before := e.version()
	bad := []struct {
		name, body string
		mode       waitroom.PutMode
	}{
		{"", "{}", waitroom.PutCreate},
		{strings.Repeat("n", 129), "{}", waitroom.PutCreate},
		{"#version", "{}", waitroom.PutCreate},
		{"#version", "{}", waitroom.PutReplace},
		{"huge", strings.Repeat("b", 64<<10+1), waitroom.PutCreate},
		{"big", strings.Repeat("b", 64<<10+1), waitroom.PutReplace},
		{"a", "{}", 0},
		{"a", "{}", 9},
	}
	for _, c := range bad {
		_, err := e.put(c.name, c.body, c.mode)
		if err == nil || errors.Is(err, waitroom.ErrExists) || errors.Is(err, waitroom.ErrNotFound) || errors.Is(err, waitroom.ErrUnavailable) {
			t.Errorf("put %.16q (%d bytes, mode %d): %v, want a refusal", c.name, len(c.body), c.mode, err)
		}
	}
	for _, name := range []string{"", "#version", strings.Repeat("n", 129)} {
		if _, err := e.store().DeleteDefinition(ctx, name, nil); err == nil || errors.Is(err, waitroom.ErrNotFound) {
			t.Errorf("delete %.16q: %v, want a refusal", name, err)
		}
	}
	if v := e.version(); v != before {
		t.Errorf("version after refusals %d, want %d", v, before)
	}
	d := e.definitions(map[string]string{"a": "", strings.Repeat("n", 128): "{}", "big": strings.Repeat("b", 64<<10)})
	if !bytes.Equal(d.Bodies["big"], bytes.Repeat([]byte("b"), 64<<10)) {
		t.Errorf("the 64 KiB body did not come back whole")
	}
}
