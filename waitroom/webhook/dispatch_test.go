package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom/webhook"
)

// TestDispatcher_ReceiverVerifiesEveryMessage: two endpoints with their own
// secrets and subscriptions each get what they asked for, signed as the
// spec says, with the headers and the payload shape receivers rely on.
func TestDispatcher_ReceiverVerifiesEveryMessage(t *testing.T) {
	t.Parallel()
	a, b := newReceiver(t, nil), newReceiver(t, nil)
	obs := &counter{}
	d := webhook.New(webhook.Options{
		Endpoints: []webhook.Endpoint{
			endpoint(t, a.srv.URL+"/hooks", a.secret, webhook.QueueStarted, webhook.VisitorAdmitted),
			endpoint(t, b.srv.URL, b.secret, webhook.VisitorAdmitted),
		},
		Delivery: fast(), Observer: obs,
	})
	until := time.Date(2026, 3, 1, 12, 10, 0, 0, time.UTC)
	admitted := webhook.Event{
		Type: webhook.VisitorAdmitted, ID: webhook.Key(webhook.VisitorAdmitted, "concert", "v1:17"),
		Data: webhook.VisitorAdmittedData{Room: "concert", Visitor: "v1", Account: "user-9", Until: until},
	}
	if !d.Send(queueStarted(1)) || !d.Send(admitted) {
		t.Fatal("Send refused an event two endpoints want")
	}
	if d.Send(webhook.Event{Type: webhook.RoomClosed, ID: "x"}) {
		t.Error("Send queued an event no endpoint wants")
	}
	if err := d.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	ra, rb := a.requests(), b.requests()
	if len(ra) != 2 || len(rb) != 1 {
		t.Fatalf("a got %d, b got %d; want 2 and 1", len(ra), len(rb))
	}
	for _, r := range append(ra, rb...) {
		checkRequest(t, r)
	}
	var p struct {
		Type      string                      `json:"type"`
		Timestamp string                      `json:"timestamp"`
		Data      webhook.VisitorAdmittedData `json:"data"`
	}
	if err := json.Unmarshal(rb[0].body, &p); err != nil {
		t.Fatal(err)
	}
	if p.Type != "visitor.admitted" || p.Data.Account != "user-9" || !p.Data.Until.Equal(until) {
		t.Errorf("b got %s", rb[0].body)
	}
	if id := rb[0].header.Get("webhook-id"); id != ra[0].header.Get("webhook-id") && id != ra[1].header.Get("webhook-id") {
		t.Error("one event has two webhook-ids across endpoints")
	}
	if got := obs.get(webhook.ResultSent); got != 3 {
		t.Errorf("sent counted %d, want 3 (%v)", got, obs)
	}
}

var msgID = regexp.MustCompile(`^msg_[A-Za-z0-9_-]{24}$`)

// checkRequest holds one request to what docs/webhooks.md promises.
func checkRequest(t *testing.T, r request) {
	t.Helper()
	if r.err != nil {
		t.Errorf("signature: %v", r.err)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	if id := r.header.Get("webhook-id"); !msgID.MatchString(id) {
		t.Errorf("webhook-id %q, want msg_ and 24 URL-safe base64 characters", id)
	}
	ts, err := strconv.ParseInt(r.header.Get("webhook-timestamp"), 10, 64)
	if err != nil || time.Since(time.Unix(ts, 0)).Abs() > 5*time.Second {
		t.Errorf("webhook-timestamp %q, want unix seconds of the attempt", r.header.Get("webhook-timestamp"))
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal(r.body, &p); err != nil || len(p) != 3 || p["type"] == nil || p["timestamp"] == nil || p["data"] == nil {
		t.Errorf("payload %s, want exactly type, timestamp and data", r.body)
	}
	var typ, stamp string
	_ = json.Unmarshal(p["type"], &typ)
	_ = json.Unmarshal(p["timestamp"], &stamp)
	if _, err := time.Parse(time.RFC3339Nano, stamp); err != nil || !webhook.EventType(typ).Known() {
		t.Errorf("type %q, timestamp %q", typ, stamp)
	}
	if typ == string(webhook.QueueStarted) && stamp != "2026-03-01T12:00:00.123456789Z" {
		t.Errorf("timestamp %q, want the event's time in UTC", stamp)
	}
}

// TestDispatcher_ThreeInstancesSendOnce: three dispatchers sharing a
// Claimer each get the same queue.started; the receiver gets it once.
// (redisstore's tests do the same on Redis.)
func TestDispatcher_ThreeInstancesSendOnce(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, nil)
	claims, obs := webhook.NewMemoryClaimer(), &counter{}
	ds := make([]*webhook.Dispatcher, 3)
	for i := range ds {
		ds[i] = webhook.New(webhook.Options{
			Endpoints: []webhook.Endpoint{endpoint(t, r.srv.URL, r.secret, webhook.QueueStarted)},
			Delivery:  fast(), Claimer: claims, Observer: obs,
		})
	}
	for _, d := range ds {
		if !d.Send(queueStarted(7)) {
			t.Fatal("Send refused")
		}
	}
	for _, d := range ds {
		if err := d.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(r.requests()); n != 1 {
		t.Fatalf("receiver got %d requests, want 1", n)
	}
	if obs.get(webhook.ResultSent) != 1 || obs.get(webhook.ResultDuplicate) != 2 {
		t.Errorf("counts %v, want 1 sent and 2 duplicate", obs)
	}
}

// TestDispatcher_RepeatedSendIsOneDelivery: one instance told the same
// fact twice sends it once, without asking the Claimer again; an event
// without an ID is sent every time.
func TestDispatcher_RepeatedSendIsOneDelivery(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, nil)
	obs := &counter{}
	d := webhook.New(webhook.Options{
		Endpoints: []webhook.Endpoint{endpoint(t, r.srv.URL, r.secret, webhook.QueueStarted, webhook.RoomClosed)},
		Delivery:  fast(), Observer: obs,
	})
	first, again := d.Send(queueStarted(1)), d.Send(queueStarted(1))
	local := webhook.Event{Type: webhook.RoomClosed, Data: webhook.RoomClosedData{Room: "concert", By: "upstream"}}
	if !first || again || !d.Send(local) || !d.Send(local) {
		t.Errorf("Send: first %v, again %v; want true, false, and an event without ID sent twice", first, again)
	}
	if err := d.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	reqs := r.requests()
	if len(reqs) != 3 || obs.get(webhook.ResultDuplicate) != 1 {
		t.Fatalf("%d requests, counts %v; want 3 and 1 duplicate", len(reqs), obs)
	}
	ids := map[string]bool{}
	for _, q := range reqs {
		ids[q.header.Get("webhook-id")] = true
	}
	if len(ids) != 3 {
		t.Errorf("%d distinct webhook-ids, want 3: events without ID get their own", len(ids))
	}
}

// TestDispatcher_InvalidDataIsCounted: data that does not encode, or is
// too large, is refused at Send and counted.
func TestDispatcher_InvalidDataIsCounted(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, nil)
	obs := &counter{}
	d := webhook.New(webhook.Options{
		Endpoints: []webhook.Endpoint{endpoint(t, r.srv.URL, r.secret, webhook.RoomClosed)},
		Delivery:  fast(), Observer: obs,
	})
	defer d.Close(context.Background())
	for _, data := range []any{make(chan int), string(bytes.Repeat([]byte("x"), 20<<10))} {
		if d.Send(webhook.Event{Type: webhook.RoomClosed, ID: "x", Data: data}) {
			t.Errorf("Send queued %T data that cannot be sent", data)
		}
	}
	if obs.get(webhook.ResultInvalid) != 2 {
		t.Errorf("counts %v, want 2 invalid", obs)
	}
}

// TestDispatcher_StatusesThatEndADelivery: 3xx (never followed) and 4xx
// but 429 end the delivery at the first attempt.
func TestDispatcher_StatusesThatEndADelivery(t *testing.T) {
	t.Parallel()
	for _, status := range []int{301, 400, 401, 404, 410, 413} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			t.Parallel()
			r := newReceiver(t, func(_ int, w http.ResponseWriter) {
				w.Header().Set("Location", "http://127.0.0.1:1/elsewhere")
				w.WriteHeader(status)
			})
			obs := &counter{}
			d := webhook.New(webhook.Options{
				Endpoints: []webhook.Endpoint{endpoint(t, r.srv.URL, r.secret, webhook.QueueStarted)},
				Delivery:  fast(), Observer: obs,
			})
			d.Send(queueStarted(1))
			if err := d.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if n := len(r.requests()); n != 1 || obs.get(webhook.ResultFailedStatus) != 1 || obs.get(webhook.ResultRetried) != 0 {
				t.Errorf("%d requests, counts %v; want 1 and failed_status", n, obs)
			}
		})
	}
}

// TestDispatcher_EndlessAnswerIsCutShort: a receiver that answers 200 and
// then streams forever does not hold a worker: only the start of an answer
// is read.
func TestDispatcher_EndlessAnswerIsCutShort(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, func(_ int, w http.ResponseWriter) {
		chunk := bytes.Repeat([]byte("x"), 32<<10)
		for {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	obs := &counter{}
	cfg := fast()
	cfg.Timeout = time.Minute
	d := webhook.New(webhook.Options{Endpoints: []webhook.Endpoint{endpoint(t, r.srv.URL, r.secret, webhook.QueueStarted)}, Delivery: cfg, Observer: obs})
	d.Send(queueStarted(1))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := d.Close(ctx); err != nil || obs.get(webhook.ResultSent) != 1 {
		t.Errorf("Close = %v, counts %v; want sent without reading the whole answer", err, obs)
	}
}

// TestDispatcher_EveryDeliveryEndsOnce: Sends from many goroutines racing
// Close; every delivery ends in exactly one final result.
func TestDispatcher_EveryDeliveryEndsOnce(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, func(n int, w http.ResponseWriter) {
		if n%3 == 0 {
			w.WriteHeader(503)
		}
	})
	obs := &counter{}
	cfg := fast()
	cfg.QueueSize, cfg.Workers = 50, 4
	d := webhook.New(webhook.Options{Endpoints: []webhook.Endpoint{endpoint(t, r.srv.URL, r.secret, webhook.QueueStarted)}, Delivery: cfg, Observer: obs})
	const senders, each = 8, 100
	done := make(chan struct{})
	for s := range senders {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range each {
				d.Send(queueStarted(s*each + i%(each/2))) // every event twice
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_ = d.Close(ctx)
	for range senders {
		<-done
	}
	final := 0
	for _, res := range []webhook.Result{webhook.ResultSent, webhook.ResultFailedStatus, webhook.ResultFailedNetwork,
		webhook.ResultAbandoned, webhook.ResultDropped, webhook.ResultDuplicate, webhook.ResultInvalid} {
		final += obs.get(res)
	}
	if final != senders*each {
		t.Errorf("%d final results for %d Sends: %v", final, senders*each, obs)
	}
	if got := len(r.requests()); got < obs.get(webhook.ResultSent) {
		t.Errorf("receiver got %d requests, fewer than the %d counted sent", got, obs.get(webhook.ResultSent))
	}
}
