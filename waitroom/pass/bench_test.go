package pass

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkSign is the cost of one pass: JSON, base64 and one Ed25519
// signature, what a gateway pays per session every three quarters of a TTL.
func BenchmarkSign(b *testing.B) {
	f := newFixture(b, time.Now())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.signer.Sign(f.pass, f.now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify is what a Go site pays per request.
func BenchmarkVerify(b *testing.B) {
	f := newFixture(b, time.Now())
	keys, err := ParseJWKS(f.signer.JWKS())
	if err != nil {
		b.Fatal(err)
	}
	v := goVerifier(b, keys, f.now)
	tok := sign(b, f.signer, f.pass, f.now)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(context.Background(), tok, testRoom); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFor_Hit is what the gateway pays per admitted request once the
// session's pass is made: a cache lookup.
func BenchmarkFor_Hit(b *testing.B) {
	f := newFixture(b, time.Now())
	for i := range 10_000 { // a cache with other sessions in it
		p := f.pass
		p.Subject = fmt.Sprint(i)
		f.signer.For(p, f.now)
	}
	if _, err := f.signer.For(f.pass, f.now); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.signer.For(f.pass, f.now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFor_HitParallel is the same from every core at once.
func BenchmarkFor_HitParallel(b *testing.B) {
	f := newFixture(b, time.Now())
	if _, err := f.signer.For(f.pass, f.now); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := f.signer.For(f.pass, f.now); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
