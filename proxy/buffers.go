package proxy

import "sync"

// copyBufferSize is what ReverseProxy allocates per response without a
// pool.
const copyBufferSize = 32 << 10

// buffers lends ReverseProxy its copy buffers: without it every proxied
// response allocates 32 KiB, the largest single cost of an admitted
// request, and the garbage collector runs all the more under a spike.
type buffers struct{ pool sync.Pool }

var copyBuffers = &buffers{pool: sync.Pool{New: func() any {
	b := make([]byte, copyBufferSize)
	return &b
}}}

func (b *buffers) Get() []byte { return *b.pool.Get().(*[]byte) }

func (b *buffers) Put(buf []byte) {
	if cap(buf) != copyBufferSize {
		return // not one of ours
	}
	buf = buf[:copyBufferSize]
	b.pool.Put(&buf)
}
