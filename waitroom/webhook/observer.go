package webhook

// Result is what became of a delivery (one event to one endpoint), or of
// one step of it, as counted by an Observer.
type Result string

// Every delivery ends in exactly one of ResultSent, ResultFailedStatus,
// ResultFailedNetwork, ResultAbandoned, ResultDropped, ResultDuplicate and
// ResultInvalid; ResultRetried counts each attempt after the first and
// ResultClaimError each event whose claim failed.
const (
	// ResultSent: the endpoint answered 2xx.
	ResultSent Result = "sent"
	// ResultRetried: an attempt failed and another one is scheduled.
	ResultRetried Result = "retried"
	// ResultFailedStatus: the endpoint answered a status that is not
	// retried (3xx, 4xx but 429), or every attempt got 5xx or 429.
	ResultFailedStatus Result = "failed_status"
	// ResultFailedNetwork: the last attempt could not connect, or timed
	// out, or the connection broke.
	ResultFailedNetwork Result = "failed_network"
	// ResultAbandoned: Close's deadline came before the delivery ended.
	ResultAbandoned Result = "abandoned"
	// ResultDropped: the queue was full, or the dispatcher closed, when
	// Send was called.
	ResultDropped Result = "dropped"
	// ResultDuplicate: this event was already taken, by another instance
	// (the Claimer said so) or by an earlier Send on this one.
	ResultDuplicate Result = "duplicate"
	// ResultInvalid: the event's data does not encode as JSON, or not
	// within 16 KiB.
	ResultInvalid Result = "invalid"
	// ResultClaimError: the Claimer failed; the event was sent anyway.
	ResultClaimError Result = "claim_error"
)

// Observer hears what the dispatcher does, for metrics such as
// waitroom_webhooks_total{event,result}. It is called from Send's caller
// and from the workers: it must be cheap and safe for concurrent use.
type Observer interface {
	Webhook(event EventType, result Result)
}

type nopObserver struct{}

func (nopObserver) Webhook(EventType, Result) {}
