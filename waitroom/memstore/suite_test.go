package memstore_test

import (
	"testing"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/memstore"
	"github.com/waitroom/waitroom/waitroom/storetest"
)

// TestMemStore runs the shared store suite. One process has one memstore,
// so n instances are the same store n times.
func TestMemStore(t *testing.T) {
	storetest.Run(t, func(tb testing.TB, n int) []waitroom.Store {
		s := memstore.New()
		tb.Cleanup(func() { _ = s.Close() })
		stores := make([]waitroom.Store, n)
		for i := range stores {
			stores[i] = s
		}
		return stores
	})
}
