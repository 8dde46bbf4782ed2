package memstore

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/waitroom/waitroom/waitroom"
)

// The bounds of a definition, the Redis store's: a name it can keep beside
// its own fields (which begin with '#'), a body that one script call
// carries comfortably.
const (
	maxDefinitionName = 128
	maxDefinitionBody = 64 << 10
)

// definitions are the rooms created at run time, and their version.
type definitions struct {
	mu      sync.RWMutex
	version int64
	bodies  map[string][]byte // nil once closed; the store's own copies
}

func (d *definitions) close() {
	d.mu.Lock()
	d.bodies = nil
	d.mu.Unlock()
}

// DefinitionsVersion implements waitroom.Store. Errors: waitroom.ErrClosed,
// ctx's error.
func (s *Store) DefinitionsVersion(ctx context.Context) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.defs.mu.RLock()
	defer s.defs.mu.RUnlock()
	if s.defs.bodies == nil {
		return 0, waitroom.ErrClosed
	}
	return s.defs.version, nil
}

// LoadDefinitions implements waitroom.Store; the result shares nothing
// with the store. Errors: waitroom.ErrClosed, ctx's error.
func (s *Store) LoadDefinitions(ctx context.Context) (waitroom.Definitions, error) {
	if err := ctx.Err(); err != nil {
		return waitroom.Definitions{}, err
	}
	s.defs.mu.RLock()
	defer s.defs.mu.RUnlock()
	if s.defs.bodies == nil {
		return waitroom.Definitions{}, waitroom.ErrClosed
	}
	bodies := make(map[string][]byte, len(s.defs.bodies))
	for name, body := range s.defs.bodies {
		bodies[name] = bytes.Clone(body)
	}
	return waitroom.Definitions{Version: s.defs.version, Bodies: bodies}, nil
}

// PutDefinition implements waitroom.Store, keeping a copy of body.
// Errors: waitroom.ErrExists, waitroom.ErrNotFound, waitroom.ErrClosed,
// ctx's error, or a name, body or mode out of bounds.
func (s *Store) PutDefinition(ctx context.Context, name string, body []byte, mode waitroom.PutMode) (int64, error) {
	if err := checkDefinition(name, body, mode); err != nil {
		return 0, err
	}
	return s.defs.write(ctx, func(bodies map[string][]byte) error {
		_, ok := bodies[name]
		switch {
		case mode == waitroom.PutCreate && ok:
			return waitroom.ErrExists
		case mode == waitroom.PutReplace && !ok:
			return waitroom.ErrNotFound
		}
		bodies[name] = bytes.Clone(body)
		return nil
	})
}

// DeleteDefinition implements waitroom.Store. Errors: waitroom.ErrNotFound, waitroom.ErrChanged,
// waitroom.ErrClosed, ctx's error, or a name out of bounds.
func (s *Store) DeleteDefinition(ctx context.Context, name string, only []byte) (int64, error) {
	if err := checkDefinitionName("deleting", name); err != nil {
		return 0, err
	}
	return s.defs.write(ctx, func(bodies map[string][]byte) error {
		body, ok := bodies[name]
		if !ok {
			return waitroom.ErrNotFound
		}
		if only != nil && !bytes.Equal(body, only) {
			return waitroom.ErrChanged
		}
		delete(bodies, name)
		return nil
	})
}

// write runs change on the bodies and, when it succeeds, moves the
// version on and returns it.
func (d *definitions) write(ctx context.Context, change func(map[string][]byte) error) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.bodies == nil {
		return 0, waitroom.ErrClosed
	}
	if err := change(d.bodies); err != nil {
		return 0, err
	}
	d.version++
	return d.version, nil
}

// checkDefinition refuses what the Redis store could not keep, so both
// stores take the same definitions.
func checkDefinition(name string, body []byte, mode waitroom.PutMode) error {
	if err := checkDefinitionName("putting", name); err != nil {
		return err
	}
	switch {
	case len(body) > maxDefinitionBody:
		return fmt.Errorf("putting definition %q: body is %d bytes, at most %d", name, len(body), maxDefinitionBody)
	case mode != waitroom.PutCreate && mode != waitroom.PutReplace:
		return fmt.Errorf("putting definition %q: unknown mode %d", name, mode)
	}
	return nil
}

func checkDefinitionName(verb, name string) error {
	if name == "" || len(name) > maxDefinitionName || strings.HasPrefix(name, "#") {
		return fmt.Errorf("%s definition %.64q: name must be 1 to %d bytes, not beginning with '#', got %d bytes", verb, name, maxDefinitionName, len(name))
	}
	return nil
}
