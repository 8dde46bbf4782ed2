package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom"
)

var definitionScript = loadScript("definition.lua", preludeOnly)

// The definitions' hash holds each body under its room's name and the
// version under versionField, which no name can be: names beginning with
// '#' are refused. Bodies and names are bounded so one script call carries
// a body comfortably and LoadDefinitions stays a small read.
const (
	versionField      = "#version"
	maxDefinitionName = 128
	maxDefinitionBody = 64 << 10
)

// definition.lua's operations and results (its O_ and X_ constants).
const (
	defCreate  = 1
	defReplace = 2
	defDelete  = 3

	defOK      = 0
	defExists  = 1
	defMissing = 2
	defChanged = 3
)

// defsKey is the definitions' hash, "{<prefix>:defs}": one key, so one
// HGETALL reads them all at one version.
func (s *Store) defsKey() string {
	return "{" + s.prefix + ":defs}"
}

// DefinitionsVersion implements waitroom.Store with one HGET. Errors:
// waitroom.ErrUnavailable, waitroom.ErrClosed, ctx's error.
func (s *Store) DefinitionsVersion(ctx context.Context) (int64, error) {
	if err := s.ready(ctx); err != nil {
		return 0, err
	}
	v, err := s.client.HGet(ctx, s.defsKey(), versionField).Result()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading the definitions' version: %w", s.failure(ctx, err))
	}
	n, err := parseVersion(v)
	if err != nil {
		return 0, fmt.Errorf("reading the definitions' version: %w", unavailable(err))
	}
	return n, nil
}

// LoadDefinitions implements waitroom.Store with one HGETALL, so the
// bodies and the version are one snapshot. Errors: waitroom.ErrUnavailable,
// waitroom.ErrClosed, ctx's error.
func (s *Store) LoadDefinitions(ctx context.Context) (waitroom.Definitions, error) {
	if err := s.ready(ctx); err != nil {
		return waitroom.Definitions{}, err
	}
	h, err := s.client.HGetAll(ctx, s.defsKey()).Result()
	if err != nil {
		return waitroom.Definitions{}, fmt.Errorf("loading definitions: %w", s.failure(ctx, err))
	}
	d := waitroom.Definitions{Bodies: make(map[string][]byte, len(h))}
	for name, body := range h {
		if name != versionField {
			d.Bodies[name] = []byte(body)
		}
	}
	if v, ok := h[versionField]; ok {
		if d.Version, err = parseVersion(v); err != nil {
			return waitroom.Definitions{}, fmt.Errorf("loading definitions: %w", unavailable(err))
		}
	}
	return d, nil
}

func parseVersion(v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("definitions' %s: want a whole number >= 0, got %q", versionField, v)
	}
	return n, nil
}

// PutDefinition implements waitroom.Store in one script (definition.lua).
// Errors: waitroom.ErrExists, waitroom.ErrNotFound, waitroom.ErrUnavailable,
// waitroom.ErrClosed, ctx's error, or a name, body or mode out of bounds.
func (s *Store) PutDefinition(ctx context.Context, name string, body []byte, mode waitroom.PutMode) (int64, error) {
	if err := checkDefinitionName("putting", name); err != nil {
		return 0, err
	}
	op := defCreate
	switch {
	case len(body) > maxDefinitionBody:
		return 0, fmt.Errorf("putting definition %q: body is %d bytes, at most %d", name, len(body), maxDefinitionBody)
	case mode == waitroom.PutReplace:
		op = defReplace
	case mode != waitroom.PutCreate:
		return 0, fmt.Errorf("putting definition %q: unknown mode %d", name, mode)
	}
	v, err := s.define(ctx, op, name, body)
	if err != nil && !errors.Is(err, waitroom.ErrExists) && !errors.Is(err, waitroom.ErrNotFound) {
		err = fmt.Errorf("putting definition %q: %w", name, err)
	}
	return v, err
}

// DeleteDefinition implements waitroom.Store in one script
// (definition.lua). Errors: waitroom.ErrNotFound, waitroom.ErrChanged, waitroom.ErrUnavailable,
// waitroom.ErrClosed, ctx's error, or a name out of bounds.
func (s *Store) DeleteDefinition(ctx context.Context, name string, only []byte) (int64, error) {
	if err := checkDefinitionName("deleting", name); err != nil {
		return 0, err
	}
	v, err := s.define(ctx, defDelete, name, only)
	if err != nil && !errors.Is(err, waitroom.ErrNotFound) && !errors.Is(err, waitroom.ErrChanged) {
		err = fmt.Errorf("deleting definition %q: %w", name, err)
	}
	return v, err
}

// define runs definition.lua and returns the new version, or the sentinel
// its refusal stands for.
func (s *Store) define(ctx context.Context, op int, name string, body []byte) (int64, error) {
	args := []any{versionField, op, name}
	if op != defDelete || body != nil {
		args = append(args, body) // a delete's body: the one it removes only
	}
	var r [2]int64
	if err := s.runKeysDurable(ctx, definitionScript, []string{s.defsKey()}, args, r[:]); err != nil {
		return 0, err
	}
	switch r[0] {
	case defOK:
		return r[1], nil
	case defExists:
		return 0, waitroom.ErrExists
	case defMissing:
		return 0, waitroom.ErrNotFound
	case defChanged:
		return 0, waitroom.ErrChanged
	}
	return 0, unavailable(fmt.Errorf("%s: reply[1]: want a result from 0 to 3, got %d", definitionScript.name, r[0]))
}

func checkDefinitionName(verb, name string) error {
	if name == "" || len(name) > maxDefinitionName || strings.HasPrefix(name, "#") {
		return fmt.Errorf("%s definition %.64q: name must be 1 to %d bytes, not beginning with '#', got %d bytes", verb, name, maxDefinitionName, len(name))
	}
	return nil
}
