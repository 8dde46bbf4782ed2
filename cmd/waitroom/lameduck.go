package main

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"
)

// errLameDuck is /readyz's cause during server.shutdown_delay.
var errLameDuck = errors.New("shutting down: waiting server.shutdown_delay before draining")

// lameDuck is the period between SIGTERM and the drain. Kubernetes removes
// a terminating pod from its endpoints at the same time as it sends
// SIGTERM, but kube-proxy, ingress controllers and cloud balancers learn of
// it seconds later and keep sending requests; a listener closed at once
// would answer them with connection errors (502s at the ingress). During
// the delay every request is still served and /readyz answers 503, for
// balancers that only follow readiness.
type lameDuck struct {
	delay    time.Duration // server.shutdown_delay; 0 drains at once
	stopping chan struct{} // closed when the delay starts
}

func newLameDuck(delay time.Duration) *lameDuck {
	return &lameDuck{delay: delay, stopping: make(chan struct{})}
}

// ready is nil until the delay starts, then errLameDuck.
func (l *lameDuck) ready() error {
	select {
	case <-l.stopping:
		return errLameDuck
	default:
		return nil
	}
}

// wrap returns a context done l.delay after ctx, for Run to serve under,
// and a stop that releases it when Run returns for another reason.
func (l *lameDuck) wrap(ctx context.Context, log *zap.Logger) (context.Context, context.CancelFunc) {
	if l.delay <= 0 {
		return ctx, func() {}
	}
	out, cancel := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		select {
		case <-ctx.Done():
		case <-out.Done():
			return
		}
		close(l.stopping)
		log.Info("stopping: /readyz answers 503 and requests are still served until server.shutdown_delay ends",
			zap.Duration("delay", l.delay))
		t := time.NewTimer(l.delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-out.Done():
		}
		cancel()
	}()
	return out, cancel
}
