package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	"go.uber.org/zap"
)

// StatusClientClosedRequest is nginx's 499: the client went away before the
// upstream answered. Nobody receives it; it keeps logs and metrics from
// blaming the upstream with a 502.
const StatusClientClosedRequest = 499

// statusOf maps an error from forwarding a request to the status to answer:
// 499 when ctx (the inbound request's) was canceled, 504 for a timeout, 502
// for anything else.
func statusOf(ctx context.Context, err error) int {
	if errors.Is(ctx.Err(), context.Canceled) {
		return StatusClientClosedRequest
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(ctx.Err(), context.DeadlineExceeded):
		return http.StatusGatewayTimeout
	case errors.As(err, &ne) && ne.Timeout():
		return http.StatusGatewayTimeout
	default:
		return http.StatusBadGateway
	}
}

// handleError is the ReverseProxy's ErrorHandler. It is called before any
// byte of a response has been written: the upstream could not be reached, did
// not answer in time, or broke an upgrade.
func (u *Upstream) handleError(w http.ResponseWriter, out *http.Request, err error) {
	in, hijacked := out, false
	if rec, ok := w.(*recorder); ok {
		in, hijacked = rec.in, rec.hijacked
	}
	status := statusOf(in.Context(), err)
	if status == StatusClientClosedRequest {
		if ce := u.log.Check(zap.DebugLevel, "client went away before the upstream answered"); ce != nil {
			ce.Write(zap.Int(fieldStatus, status), zap.Error(err))
		}
		// The status is for the access log and OnDone; no body, nobody reads it.
		w.WriteHeader(status)
		return
	}
	// err names addresses and timeouts, never header values, so it is safe
	// to log; it never goes into the response.
	u.log.Warn("upstream failed", zap.Int(fieldStatus, status), zap.Error(err))
	if !hijacked { // after a failed upgrade the connection is no longer HTTP
		u.writeError(w, in, status)
	}
}

// writeError answers status with the injected error page, or else a short
// plain-text body. Headers the caller set (a renewed session cookie, say) are
// kept.
func (u *Upstream) writeError(w http.ResponseWriter, r *http.Request, status int) {
	if u.opt.ErrorPage != nil {
		u.opt.ErrorPage(w, r, status)
		return
	}
	h := w.Header()
	h.Del("Content-Length")
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintf(w, "%d %s\n", status, http.StatusText(status))
}
