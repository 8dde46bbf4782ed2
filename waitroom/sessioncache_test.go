package waitroom

import (
	"fmt"
	"testing"
	"time"
)

func TestSessionCache(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	c := newSessionCache(time.Second)
	until := t0.Add(time.Minute)
	c.put("concert", "v1", "", until, t0)
	if got, ok := c.get("concert", "v1", "", t0.Add(999*time.Millisecond)); !ok || !got.Equal(until) {
		t.Fatalf("within the interval: %v %v, want %v", got, ok, until)
	}
	if _, ok := c.get("concert", "v1", "", t0.Add(time.Second)); ok {
		t.Fatal("an entry as old as the interval must not be trusted")
	}
	if _, ok := c.get("festival", "v1", "", t0); ok {
		t.Fatal("an entry of another room answered")
	}
	c.put("concert", "v2", "", t0.Add(500*time.Millisecond), t0)
	if _, ok := c.get("concert", "v2", "", t0.Add(500*time.Millisecond)); ok {
		t.Fatal("a session that has ended must not be trusted")
	}
	c.drop("concert", "v1")
	if _, ok := c.get("concert", "v1", "", t0); ok {
		t.Fatal("a dropped visitor answered")
	}
	if newSessionCache(0) != nil {
		t.Fatal("a zero interval must turn the cache off")
	}
	var off *sessionCache
	off.put("concert", "v1", "", until, t0)
	if _, ok := off.get("concert", "v1", "", t0); ok {
		t.Fatal("a cache that is off answered")
	}
}

// Memory holds the visitors of the last two intervals at most, however
// many went by before.
func TestSessionCache_Bounded(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	c := newSessionCache(time.Second)
	for i := range 10_000 {
		now := t0.Add(time.Duration(i) * time.Millisecond) // 1,000 new visitors a second for 10s
		c.put("concert", fmt.Sprint(i), "", now.Add(time.Minute), now)
	}
	if n := c.len(); n > 2_000 {
		t.Fatalf("the cache holds %d entries after 10 intervals of 1,000, want at most 2,000", n)
	}
	if _, ok := c.get("concert", "9999", "", t0.Add(9999*time.Millisecond)); !ok {
		t.Fatal("the latest visitor was lost")
	}
}
