package flight

import (
	"sync"

	"google.golang.org/grpc/mem"

	"github.com/ndarrow/ndarrow/internal/mmap"
)

// frames is the buffer pool of every Client's connections, where gRPC reads each HTTP/2 DATA
// frame it receives (at most 16 KiB) and puts it back once the message the frame belongs to is
// decoded, and where a Server marshals the bodies of the messages it sends (serverCodec),
// which gRPC puts back once written.
var frames = &framePool{}

// framePool hands out frame buffers carved from anonymous mappings (mmap.Anonymous), outside
// the Go heap. A fetch holds the frames of a whole message at once (4096 of them for the 64
// MiB messages Arrow C++'s server sends) and receives them while its result grows the heap, so
// the garbage collector runs throughout: frames from the heap would be zeroed, and each
// allocation would make the receiving goroutine do collection work, which measured as a third
// of a fetch's time. gRPC's own pool moreover empties at every collection and zeroes what it
// hands out again; this one does neither (gRPC fills every byte of a frame it asks for).
//
// Frames are kept for reuse: up to maxWarmFrames with their pages while a stream runs, and
// idleWarmFrames once none does (begin, end); the pages of the others are given back to the
// system (mmap.Discard), their addresses kept for the next frames needed.
type framePool struct {
	mu     sync.Mutex
	warm   []*[]byte // free, pages held
	cold   []*[]byte // free, pages given back
	active int       // streams running
	out    int       // frames handed out
}

const (
	frameBytes     = 16 << 10 // gRPC's largest HTTP/2 frame
	arenaFrames    = 64       // frames mapped at once (1 MiB)
	maxWarmFrames  = 5 << 10  // 80 MiB: a 64 MiB message and a stream's window
	idleWarmFrames = 64
)

// Get returns a buffer of n bytes.
func (p *framePool) Get(n int) *[]byte {
	if n > frameBytes {
		return mem.DefaultBufferPool().Get(n)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	free := &p.warm
	if len(p.warm) == 0 {
		free = &p.cold
	}
	p.out++
	if k := len(*free); k > 0 {
		b := (*free)[k-1]
		*free = (*free)[:k-1]
		*b = (*b)[:n]
		return b
	}
	arena, err := mmap.Anonymous(arenaFrames * frameBytes)
	if err != nil {
		b := make([]byte, n, frameBytes)
		return &b
	}
	for i := 1; i < arenaFrames; i++ {
		f := arena[i*frameBytes : i*frameBytes : (i+1)*frameBytes]
		p.cold = append(p.cold, &f)
	}
	b := arena[:n:frameBytes]
	return &b
}

// Put takes back a buffer Get returned.
func (p *framePool) Put(b *[]byte) {
	if cap(*b) != frameBytes { // a larger buffer, from gRPC's pool
		mem.DefaultBufferPool().Put(b)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.out--
	if len(p.warm) < p.keep() {
		p.warm = append(p.warm, b)
		return
	}
	mmap.Discard((*b)[:cap(*b)])
	p.cold = append(p.cold, b)
}

// resident returns the bytes of frames whose pages may be held: those handed out and the
// warm ones.
func (p *framePool) resident() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return uint64(p.out+len(p.warm)) * frameBytes
}

// keep returns how many free frames keep their pages now.
func (p *framePool) keep() int {
	if p.active > 0 {
		return maxWarmFrames
	}
	return idleWarmFrames
}

// begin tells the pool a stream that moves frames (a Client's fetch, a Server's DoGet)
// starts; end, that it ended: the last to end gives the pages of the frames kept beyond
// idleWarmFrames back to the system.
func (p *framePool) begin() {
	p.mu.Lock()
	p.active++
	p.mu.Unlock()
}

func (p *framePool) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.active--; p.active > 0 {
		return
	}
	for len(p.warm) > idleWarmFrames {
		b := p.warm[len(p.warm)-1]
		p.warm = p.warm[:len(p.warm)-1]
		mmap.Discard((*b)[:cap(*b)])
		p.cold = append(p.cold, b)
	}
}
