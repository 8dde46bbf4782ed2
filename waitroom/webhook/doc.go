// Package webhook tells a site what its waiting rooms do, by signed HTTP
// POSTs that follow the Standard Webhooks scheme: a queue starts or
// drains, a room changes mode or closes, a visitor with a site-signed
// identity is let in. docs/webhooks.md is the receiver's side.
//
// # Sending
//
// The gateway builds a Dispatcher (New) from the configured endpoints and
// calls Send where something happens. Send encodes the event and queues one
// delivery per subscribed endpoint in a bounded queue; it never waits on
// the network or the store, and when the queue is full it drops the event
// and counts it (ResultDropped). Workers POST each delivery with
// webhook-id, webhook-timestamp and webhook-signature, and retry network
// errors, 5xx and 429 with exponential backoff and jitter, waiting at
// least what Retry-After asks within BackoffMax; other answers end the
// delivery. A delivery waiting for its retry keeps its place in the queue,
// so retries are never dropped. Close drains the queue or gives up at its
// deadline.
//
// # Once across instances
//
// Every gateway instance may notice the same fact: each sees the line of a
// room start. The caller gives such an event an ID built from what every
// instance knows alike (Key), the webhook-id is a hash of it (MessageID),
// and before the first attempt a worker asks the Claimer whether this
// instance is the one that sends it; redisstore.Store claims with one SET
// NX in Redis, MemoryClaimer within one process. A Claimer that fails does
// not stop the event: it is sent, and counted as ResultClaimError, since a
// duplicate, which receivers drop by its webhook-id, beats a lost event.
// The claim is taken by the instance that will send, after the queue
// accepted the event, so an instance whose queue is full leaves the event
// to another.
//
// # Receiving
//
// Sign and Verify implement the scheme for sites written in Go: the
// signed content is "<webhook-id>.<webhook-timestamp>.<body>", the key the
// decoded bytes of a "whsec_" secret (ParseSecret).
//
// The package imports nothing of the gateway, so sites may import it
// alone.
package webhook
