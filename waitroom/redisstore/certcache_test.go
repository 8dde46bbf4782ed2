package redisstore_test

import (
	"context"
	"errors"
	"testing"

	"golang.org/x/crypto/acme/autocert"

	"github.com/waitroom/waitroom/waitroom/redisstore"
	"github.com/waitroom/waitroom/waitroom/redisstore/redistest"
)

func TestCertCache_SharedByInstances(t *testing.T) {
	srv := redistest.Start(t)
	a := redisstore.New(srv.Client(), redisstore.WithKeyPrefix("acme1"))
	b := redisstore.New(srv.NewClient(), redisstore.WithKeyPrefix("acme1"))
	other := redisstore.New(srv.Client(), redisstore.WithKeyPrefix("acme2"))
	ctx := context.Background()
	if _, err := a.CertCache().Get(ctx, "shop.example.com"); !errors.Is(err, autocert.ErrCacheMiss) {
		t.Fatalf("an empty cache: %v", err)
	}
	if err := a.CertCache().Put(ctx, "shop.example.com", []byte("chain and key")); err != nil {
		t.Fatal(err)
	}
	if got, err := b.CertCache().Get(ctx, "shop.example.com"); err != nil || string(got) != "chain and key" {
		t.Fatalf("another instance reads %q, %v", got, err)
	}
	if _, err := other.CertCache().Get(ctx, "shop.example.com"); !errors.Is(err, autocert.ErrCacheMiss) {
		t.Fatalf("another key prefix must not see it: %v", err)
	}
	if err := b.CertCache().Delete(ctx, "shop.example.com"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CertCache().Get(ctx, "shop.example.com"); !errors.Is(err, autocert.ErrCacheMiss) {
		t.Fatalf("after delete: %v", err)
	}
	if err := a.CertCache().Put(ctx, "big", make([]byte, 2<<20)); err == nil {
		t.Fatal("a 2 MiB entry was kept")
	}
}
