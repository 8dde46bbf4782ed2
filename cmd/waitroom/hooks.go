package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/webhook"
)

// hooks turns what the rooms notice into webhook events. The dispatcher
// in service is replaced whole when a reload changes the webhooks list;
// the old one drains in the background.
type hooks struct {
	d       atomic.Pointer[webhook.Dispatcher] // nil: no webhooks
	claimer webhook.Claimer
	log     *zap.Logger
}

var (
	_ waitroom.Notifier          = (*hooks)(nil)
	_ waitroom.AutopilotNotifier = (*hooks)(nil)
)

// debounce is how long an instance's claim of a line's start or drain
// keeps the other instances, which see the same change at their own ticks,
// from sending it again.
const debounce = time.Minute

func (h *hooks) send(e webhook.Event) {
	if d := h.d.Load(); d != nil {
		d.Send(e)
	}
}

// once sends e when this instance is the first to claim key within the
// debounce: for facts no store value names alike on every instance.
func (h *hooks) once(key string, e webhook.Event) {
	d := h.d.Load()
	if d == nil || !d.Wants(e.Type) {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		won, err := h.claimer.Claim(ctx, key, debounce)
		if err != nil {
			h.log.Debug("claiming a webhook event; sending it anyway", zap.String("event", string(e.Type)), zap.Error(err))
		}
		if won || err != nil {
			d.Send(e)
		}
	}()
}

func (h *hooks) QueueStarted(room string, waiting int64) {
	h.once(webhook.Key(webhook.QueueStarted, room, "debounce"), webhook.Event{Type: webhook.QueueStarted,
		Data: webhook.QueueStartedData{Room: room, Waiting: waiting}})
}

func (h *hooks) QueueDrained(room string) {
	h.once(webhook.Key(webhook.QueueDrained, room, "debounce"), webhook.Event{Type: webhook.QueueDrained,
		Data: webhook.QueueDrainedData{Room: room}})
}

func (h *hooks) ModeChanged(room string, from, to waitroom.Mode, by, fact string) {
	h.send(webhook.Event{Type: webhook.RoomModeChanged, ID: webhook.Key(webhook.RoomModeChanged, room, fact),
		Data: webhook.ModeChangedData{Room: room, From: string(from), To: string(to), By: by}})
}

func (h *hooks) RoomClosed(room, by, fact string) {
	h.send(webhook.Event{Type: webhook.RoomClosed, ID: webhook.Key(webhook.RoomClosed, room, fact),
		Data: webhook.RoomClosedData{Room: room, By: by}})
}

func (h *hooks) VisitorAdmitted(room, visitor, account string, until time.Time, fact string) {
	h.send(webhook.Event{Type: webhook.VisitorAdmitted, ID: webhook.Key(webhook.VisitorAdmitted, room, fact),
		Data: webhook.VisitorAdmittedData{Room: room, Visitor: visitor, Account: account, Until: until}})
}

// AutopilotChanged sends room.autopilot_changed. The store decided that
// this instance sends it (waitroom.AutopilotNotices: at most one rise and
// one fall a minute per room, a move held back sent later as the limit in
// effect then, from the limit last sent), so it goes out as it is.
func (h *hooks) AutopilotChanged(room string, from int, v *waitroom.AutopilotView) {
	h.send(webhook.Event{Type: webhook.RoomAutopilotChanged,
		ID: webhook.Key(webhook.RoomAutopilotChanged, room, fmt.Sprintf("%d>%d@%d", from, v.Limit, time.Now().UnixMicro())),
		Data: webhook.AutopilotChangedData{Room: room, From: from, To: v.Limit, Rate: v.Rate.String(), Reason: v.ReasonText(),
			LatencySeconds: v.Latency.Seconds(), ErrorShare: v.ErrorShare()}})
}

// AutopilotWanted reports whether a webhook takes room.autopilot_changed,
// so the rooms ask the store about sending it only then.
func (h *hooks) AutopilotWanted() bool {
	d := h.d.Load()
	return d != nil && d.Wants(webhook.RoomAutopilotChanged)
}

// use puts a dispatcher for the endpoints in service (none: webhooks off),
// unless the endpoints are those already served.
func (h *hooks) use(a *App, cfg []webhook.Config, endpoints []webhook.Endpoint, delivery webhook.Delivery) {
	key := fingerprintHooks(cfg) + fmt.Sprint(delivery)
	if key == a.hooksKey {
		return
	}
	a.hooksKey = key
	var next *webhook.Dispatcher
	if len(endpoints) > 0 {
		next = webhook.New(webhook.Options{Endpoints: endpoints, Delivery: delivery, Claimer: h.claimer,
			Observer: a.metrics, Log: a.log.Named("webhook")})
	}
	if old := h.d.Swap(next); old != nil {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = old.Close(ctx)
		}()
	}
}

func fingerprintHooks(cfg []webhook.Config) string {
	var b []byte
	for _, c := range cfg {
		b = append(b, c.URL...)
		b = append(b, 0)
		b = append(b, c.Secret...)
		b = append(b, 0)
		for _, e := range c.Events {
			b = append(b, e...)
			b = append(b, ',')
		}
		b = append(b, 1)
	}
	return string(b)
}

// close drains the dispatcher in service for up to the context's time.
func (h *hooks) close(ctx context.Context) {
	if d := h.d.Swap(nil); d != nil {
		_ = d.Close(ctx)
	}
}
