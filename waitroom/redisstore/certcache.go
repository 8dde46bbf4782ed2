package redisstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
	"golang.org/x/crypto/acme/autocert"
)

var cachePutScript = loadScript("cacheput.lua", preludeOnly)

// maxCacheEntry bounds what the ACME client may keep under one name: a
// certificate chain and its key are a few kilobytes.
const maxCacheEntry = 1 << 20

// CertCache keeps the ACME client's certificates and account key in this
// Redis, under "{<prefix>:acme}:<name>", so every gateway instance serves
// the certificate one of them obtained and twenty instances do not each
// ask the CA (whose rate limits would soon refuse them). Writes are one
// script each; reads are plain GETs.
func (s *Store) CertCache() autocert.Cache { return certCache{s} }

type certCache struct{ s *Store }

func (c certCache) key(name string) string { return "{" + c.s.prefix + ":acme}:" + name }

// Get implements autocert.Cache.
func (c certCache) Get(ctx context.Context, name string) ([]byte, error) {
	if err := c.s.ready(ctx); err != nil {
		return nil, err
	}
	b, err := c.s.client.Get(ctx, c.key(name)).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, autocert.ErrCacheMiss
	case err != nil:
		return nil, fmt.Errorf("reading the ACME cache entry %q: %w", name, c.s.failure(ctx, err))
	}
	return b, nil
}

// Put implements autocert.Cache.
func (c certCache) Put(ctx context.Context, name string, data []byte) error {
	if len(data) > maxCacheEntry {
		return fmt.Errorf("writing the ACME cache entry %q: %d bytes, at most %d", name, len(data), maxCacheEntry)
	}
	if err := c.s.ready(ctx); err != nil {
		return err
	}
	var r [1]int64
	if err := c.s.runKeys(ctx, cachePutScript, []string{c.key(name)}, []any{"put", data}, r[:]); err != nil {
		return fmt.Errorf("writing the ACME cache entry %q: %w", name, err)
	}
	return nil
}

// Delete implements autocert.Cache.
func (c certCache) Delete(ctx context.Context, name string) error {
	if err := c.s.ready(ctx); err != nil {
		return err
	}
	var r [1]int64
	if err := c.s.runKeys(ctx, cachePutScript, []string{c.key(name)}, []any{"delete", ""}, r[:]); err != nil {
		return fmt.Errorf("deleting the ACME cache entry %q: %w", name, err)
	}
	return nil
}
