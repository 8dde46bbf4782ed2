package webhook

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
)

// Log field names of this package. Secrets, signatures and endpoint paths
// are never logged under any name.
const (
	fieldEvent     = "event"
	fieldMessageID = "webhook_id"
	fieldEndpoint  = "endpoint"
	fieldAttempt   = "attempt"
	fieldStatus    = "status"
	fieldDuration  = "duration"
)

// userAgent names the sender to receivers.
const userAgent = "waitroom-webhook/1"

// maxResponse bounds what is read of an answer: only the status matters,
// and reading a little lets the connection be reused.
const maxResponse = 64 << 10

// outcome is what one attempt came to.
type outcome struct {
	ok     bool
	retry  bool          // worth another attempt
	result Result        // the delivery's result if this was the last
	status int           // 0: no answer
	after  time.Duration // the answer's Retry-After, 0 if none
	err    error
}

func (d *Dispatcher) work() {
	defer d.wg.Done()
	for {
		select {
		case <-d.stop:
			return
		case j := <-d.queue:
			d.run(j)
		}
	}
}

// run makes one attempt of j, after the claim if it is j's first, and ends
// the delivery or schedules the next attempt.
func (d *Dispatcher) run(j *job) {
	if d.ctx.Err() != nil {
		d.finish(j, ResultAbandoned)
		return
	}
	if j.attempt == 0 && !d.claim(j.msg) {
		d.finish(j, ResultDuplicate)
		return
	}
	j.attempt++
	start := time.Now()
	o := d.attempt(j)
	switch {
	case o.ok:
		if ce := d.log.Check(zap.DebugLevel, "webhook sent"); ce != nil {
			ce.Write(d.fields(j, o, start)...)
		}
		d.finish(j, ResultSent)
	case d.ctx.Err() != nil:
		d.finish(j, ResultAbandoned)
	case !o.retry || j.attempt >= d.cfg.MaxAttempts:
		d.log.Warn("webhook delivery failed", d.fields(j, o, start)...)
		d.finish(j, o.result)
	default:
		if ce := d.log.Check(zap.DebugLevel, "webhook attempt failed; retrying"); ce != nil {
			ce.Write(d.fields(j, o, start)...)
		}
		d.obs.Webhook(j.msg.typ, ResultRetried)
		d.schedule(j, d.backoff(j.attempt, o.after))
	}
}

func (d *Dispatcher) fields(j *job, o outcome, start time.Time) []zap.Field {
	f := []zap.Field{
		zap.String(fieldEvent, string(j.msg.typ)), zap.String(fieldMessageID, j.msg.id),
		zap.Stringer(fieldEndpoint, j.ep), zap.Int(fieldAttempt, j.attempt),
		zap.Duration(fieldDuration, time.Since(start)),
	}
	if o.status != 0 {
		f = append(f, zap.Int(fieldStatus, o.status))
	}
	if o.err != nil {
		f = append(f, zap.Error(o.err))
	}
	return f
}

// claim asks the Claimer, once per message, whether this instance sends
// it. If the Claimer fails the message is sent anyway: a duplicate, which
// receivers drop by its webhook-id, beats an event nobody sends.
func (d *Dispatcher) claim(m *message) bool {
	m.once.Do(func() {
		m.won = true
		if !m.shared || d.claimer == nil {
			return
		}
		ctx, cancel := context.WithTimeout(d.ctx, d.cfg.Timeout)
		defer cancel()
		won, err := d.claimer.Claim(ctx, m.id, d.cfg.ClaimTTL)
		switch {
		case err == nil:
			m.won = won
		case d.ctx.Err() == nil: // not Close giving up
			d.obs.Webhook(m.typ, ResultClaimError)
			d.log.Warn("webhook claim failed; sending anyway", zap.String(fieldEvent, string(m.typ)),
				zap.String(fieldMessageID, m.id), zap.Error(err))
		}
	})
	return m.won
}

// attempt POSTs j's message once, signed for this attempt's time.
func (d *Dispatcher) attempt(j *job) outcome {
	ctx, cancel := context.WithTimeout(d.ctx, d.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, j.ep.url, bytes.NewReader(j.msg.body))
	if err != nil { // the URL was checked when it was built
		return outcome{result: ResultFailedNetwork, err: safeErr(err)}
	}
	now := time.Now()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set(HeaderID, j.msg.id)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	req.Header.Set(HeaderSignature, Sign(j.ep.secret, j.msg.id, now, j.msg.body))
	resp, err := d.client.Do(req)
	if err != nil {
		return outcome{retry: true, result: ResultFailedNetwork, err: safeErr(err)}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponse))
	_ = resp.Body.Close()
	o := outcome{status: resp.StatusCode, result: ResultFailedStatus}
	switch s := resp.StatusCode; {
	case s >= 200 && s < 300:
		o.ok = true
	case s == http.StatusTooManyRequests || s >= 500:
		o.retry = true
		o.after = retryAfter(resp.Header.Get("Retry-After"), now)
	}
	return o
}

// safeErr drops the URL a client error names: its path or query may hold
// a token. What is left names the host and what went wrong.
func safeErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// backoff is the wait after attempt n failed: BackoffBase doubled n-1
// times, ±20% so that instances and deliveries spread out, at least the
// receiver's Retry-After, at most BackoffMax.
func (d *Dispatcher) backoff(n int, after time.Duration) time.Duration {
	b := d.cfg.BackoffBase
	for i := 1; i < n && b < d.cfg.BackoffMax; i++ {
		b *= 2
	}
	b = min(b, d.cfg.BackoffMax)
	b = b*4/5 + rand.N(b*2/5+1)
	return min(max(b, after), d.cfg.BackoffMax)
}

// maxRetryAfter bounds a Retry-After read as seconds, before BackoffMax
// caps it: a stranger's header must not overflow a Duration.
const maxRetryAfter = 7 * 24 * time.Hour

// retryAfter reads a Retry-After header: seconds, or an HTTP date. Anything
// else, or a time past, is 0.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if strings.Trim(v, "0123456789") == "" {
		if len(v) > 9 {
			return maxRetryAfter
		}
		n, _ := strconv.Atoi(v)
		return min(time.Duration(n)*time.Second, maxRetryAfter)
	}
	t, err := http.ParseTime(v)
	if err != nil || !t.After(now) {
		return 0
	}
	return min(t.Sub(now), maxRetryAfter)
}

// schedule queues j again after delay, keeping its slot meanwhile.
func (d *Dispatcher) schedule(j *job, delay time.Duration) {
	d.mu.Lock()
	if d.gaveUp {
		d.mu.Unlock()
		d.finish(j, ResultAbandoned)
		return
	}
	d.timers[j] = time.AfterFunc(delay, func() { d.requeue(j) })
	d.mu.Unlock()
}

// requeue puts j back in the queue when its wait is over, unless Close
// gave up on it meanwhile (and counted it).
func (d *Dispatcher) requeue(j *job) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.timers[j]; !ok {
		return
	}
	delete(d.timers, j)
	d.queue <- j // never blocks: j holds a slot
}
