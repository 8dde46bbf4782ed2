package redisstore_test

import (
	"context"
	crand "crypto/rand"
	"encoding/base64"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/storetest"
)

// visitorID is shaped like a real one: 128 random bits, 22 characters.
func visitorID() string {
	var b [16]byte
	_, _ = crand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// limits: no rate limit, sessions and places that outlast any test.
func limits(maxActive int) waitroom.Limits {
	return waitroom.Limits{MaxActive: maxActive, AdmitBurst: 1, SessionTTL: time.Minute, AbandonAfter: time.Minute}
}

// sample is a reading of AdmittedTotal by a call that ran from from to to.
type sample struct {
	from, to time.Time
	admitted int64
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// enter brings a new visitor into room as a browser does (storetest.Enter).
var enter = storetest.Enter
