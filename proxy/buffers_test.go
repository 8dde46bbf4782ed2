package proxy

import "testing"

func TestBuffers_ReuseAndRefuseStrangers(t *testing.T) {
	b := copyBuffers.Get()
	if len(b) != copyBufferSize {
		t.Fatalf("buffer of %d bytes, want %d", len(b), copyBufferSize)
	}
	copyBuffers.Put(make([]byte, 10)) // not ours: dropped, never lent out
	for range 100 {
		if got := copyBuffers.Get(); len(got) != copyBufferSize {
			t.Fatalf("lent a buffer of %d bytes", len(got))
		}
	}
	if n := testing.AllocsPerRun(100, func() { copyBuffers.Put(copyBuffers.Get()) }); n > 1 {
		t.Errorf("a get and put allocate %.0f times, want at most 1 (the pointer)", n)
	}
}
