package webhook

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// Options configure a Dispatcher. Only Endpoints is needed.
type Options struct {
	// Endpoints are the built webhooks list (BuildEndpoints).
	Endpoints []Endpoint
	// Delivery sets the queue, the workers, the attempts and the claims;
	// zero fields take DefaultDeliveryConfig's values.
	Delivery Delivery
	// Claimer decides which instance sends an event that has an ID. Nil:
	// this instance sends every event it is given (one instance, or events
	// only it can see). Repeated Sends of one event on one instance are
	// dropped as duplicates either way, without asking the Claimer.
	Claimer Claimer
	// Observer counts results; nil counts nothing.
	Observer Observer
	// Log gets failures at warn, sends at debug; nil logs nothing. Secrets,
	// signatures and endpoint paths are never logged.
	Log *zap.Logger
	// Transport sends the requests; nil: a clone of http.DefaultTransport.
	// Redirects are never followed either way.
	Transport http.RoundTripper
}

// Dispatcher sends events to the endpoints subscribed to them, signed,
// from a bounded queue, with retries. Safe for concurrent use; New starts
// its workers and Close stops them.
type Dispatcher struct {
	endpoints []Endpoint
	cfg       Delivery
	claimer   Claimer
	local     MemoryClaimer // repeated Sends on this instance
	obs       Observer
	log       *zap.Logger
	client    *http.Client

	queue  chan *job       // every job in it holds one of cfg.QueueSize slots, so a push never blocks
	ctx    context.Context // cancelled when Close gives up: requests in flight end
	cancel context.CancelFunc
	stop   chan struct{} // closed when the workers should return
	wg     sync.WaitGroup

	mu      sync.Mutex
	closing bool
	gaveUp  bool
	pending int                  // slots taken: jobs queued, running or waiting for a retry
	timers  map[*job]*time.Timer // jobs waiting for a retry
	idle    chan struct{}        // closed once closing and pending is 0
	isIdle  bool

	drops      atomic.Int64 // dropped since the last warning
	dropLogged atomic.Int64 // unix nanoseconds of the last warning
}

// message is one event as sent to every endpoint: encoded once, claimed
// once.
type message struct {
	typ    EventType
	id     string // webhook-id
	body   []byte
	shared bool // the event has an ID: ask the Claimer
	once   sync.Once
	won    bool // this instance sends it
}

// job is one delivery: a message to one endpoint, and the attempts made.
type job struct {
	msg     *message
	ep      *Endpoint
	attempt int
}

// New starts a dispatcher with o.Delivery.Workers workers.
func New(o Options) *Dispatcher {
	cfg := o.Delivery.withDefaults()
	d := &Dispatcher{
		endpoints: slices.Clone(o.Endpoints), cfg: cfg, claimer: o.Claimer, obs: o.Observer, log: o.Log,
		queue: make(chan *job, cfg.QueueSize), stop: make(chan struct{}),
		timers: make(map[*job]*time.Timer), idle: make(chan struct{}),
	}
	if d.obs == nil {
		d.obs = nopObserver{}
	}
	if d.log == nil {
		d.log = zap.NewNop()
	}
	d.client = newClient(o.Transport, cfg.Workers)
	d.ctx, d.cancel = context.WithCancel(context.Background())
	d.wg.Add(cfg.Workers)
	for range cfg.Workers {
		go d.work()
	}
	return d
}

// newClient sends without following redirects: a receiver that moved
// should be reconfigured, and a redirect must not carry a signed message
// elsewhere.
func newClient(rt http.RoundTripper, workers int) *http.Client {
	if rt == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = workers
		rt = t
	}
	return &http.Client{
		Transport:     rt,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Wants reports whether any endpoint subscribed to t, so a caller can skip
// building an event nobody gets.
func (d *Dispatcher) Wants(t EventType) bool {
	for i := range d.endpoints {
		if d.endpoints[i].Wants(t) {
			return true
		}
	}
	return false
}

// Send queues e for every endpoint subscribed to its type and returns at
// once: it never waits on the network, the store or the workers. It
// reports whether e was queued: false when nobody wants it, when its data
// does not encode, when the queue lacks room for all its deliveries, when
// this instance already took an event with the same ID, or after Close.
// Each case but the first is counted; data that does not encode and drops
// are logged too.
func (d *Dispatcher) Send(e Event) bool {
	var targets []*Endpoint
	for i := range d.endpoints {
		if d.endpoints[i].Wants(e.Type) {
			targets = append(targets, &d.endpoints[i])
		}
	}
	if len(targets) == 0 {
		return false
	}
	body, err := encode(e, time.Now())
	if err != nil {
		d.count(e.Type, ResultInvalid, len(targets))
		d.log.Warn("webhook event not sent", zap.String(fieldEvent, string(e.Type)), zap.Error(err))
		return false
	}
	m := &message{typ: e.Type, id: MessageID(e.ID), body: body, shared: e.ID != ""}
	if r := d.enqueue(m, targets); r != "" {
		d.count(e.Type, r, len(targets))
		if r == ResultDropped {
			d.logDrop(e.Type, len(targets))
		}
		return false
	}
	return true
}

// enqueue takes a slot per target and queues the jobs, or says why not.
func (d *Dispatcher) enqueue(m *message, targets []*Endpoint) Result {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.closing || d.pending+len(targets) > d.cfg.QueueSize:
		return ResultDropped
	case m.shared && !d.local.claim(m.id, d.cfg.ClaimTTL):
		return ResultDuplicate
	}
	d.pending += len(targets)
	for _, ep := range targets {
		d.queue <- &job{msg: m, ep: ep}
	}
	return ""
}

func (d *Dispatcher) count(t EventType, r Result, n int) {
	for range n {
		d.obs.Webhook(t, r)
	}
}

// logDrop warns about dropped deliveries at most every ten seconds, with
// how many since the last warning: a full queue drops many.
func (d *Dispatcher) logDrop(t EventType, n int) {
	d.drops.Add(int64(n))
	now, last := time.Now().UnixNano(), d.dropLogged.Load()
	if now-last < int64(10*time.Second) || !d.dropLogged.CompareAndSwap(last, now) {
		return
	}
	d.log.Warn("webhook queue full or closed: deliveries dropped", zap.String(fieldEvent, string(t)),
		zap.Int64("dropped", d.drops.Swap(0)), zap.Int("queue_size", d.cfg.QueueSize))
}

// finish ends a delivery with r and frees its slot.
func (d *Dispatcher) finish(j *job, r Result) {
	d.obs.Webhook(j.msg.typ, r)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pending--
	d.checkIdle()
}

// checkIdle closes idle once Close waits and nothing is pending. d.mu held.
func (d *Dispatcher) checkIdle() {
	if d.closing && d.pending == 0 && !d.isIdle {
		d.isIdle = true
		close(d.idle)
	}
}

// Close stops taking events (Send drops them) and waits until every queued
// delivery ended, retries included, or ctx is done. Then it gives up: it
// cancels requests in flight, counts what is left as abandoned and returns
// an error that wraps ctx's. Either way the workers have stopped when it
// returns. Calling it again returns nil.
func (d *Dispatcher) Close(ctx context.Context) error {
	d.mu.Lock()
	if d.closing {
		d.mu.Unlock()
		return nil
	}
	d.closing = true
	d.checkIdle()
	d.mu.Unlock()
	var err error
	select {
	case <-d.idle:
	case <-ctx.Done():
		err = d.giveUp(ctx)
	}
	close(d.stop)
	d.wg.Wait()
	// Only after giving up can jobs be left: the workers may stop before
	// taking them. Nothing adds to the queue any more.
	for len(d.queue) > 0 {
		d.finish(<-d.queue, ResultAbandoned)
	}
	d.cancel()
	return err
}

// giveUp cancels what is in flight and abandons the jobs waiting for a
// retry.
func (d *Dispatcher) giveUp(ctx context.Context) error {
	d.cancel()
	d.mu.Lock()
	d.gaveUp = true
	n := d.pending
	var waiting []*job
	for j, t := range d.timers {
		t.Stop()
		waiting = append(waiting, j)
	}
	clear(d.timers)
	d.mu.Unlock()
	for _, j := range waiting {
		d.finish(j, ResultAbandoned)
	}
	d.log.Warn("webhook dispatcher closed before every delivery ended", zap.Int("abandoned", n))
	return fmt.Errorf("closing webhook dispatcher: gave up on %d deliveries: %w", n, ctx.Err())
}
