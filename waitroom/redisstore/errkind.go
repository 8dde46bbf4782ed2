package redisstore

import (
	"errors"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/waitroom"
)

// ErrorKind sorts a failed call to Redis, for waitroom_store_errors_total
// and for /readyz: the few kinds an operator acts on differently. The set
// is closed (ErrorKinds), so the metric has a bounded number of series.
type ErrorKind string

const (
	// KindUnreachable: no answer (connection refused or reset, a timeout,
	// a dial that failed, the pool exhausted).
	KindUnreachable ErrorKind = "unreachable"
	// KindReadOnly: the node is a replica now (READONLY), typically the
	// old master demoted by a failover, or a client still on it.
	KindReadOnly ErrorKind = "readonly"
	// KindMasterDown: a replica whose master is gone refuses to serve
	// stale data (MASTERDOWN, replica-serve-stale-data no).
	KindMasterDown ErrorKind = "masterdown"
	// KindLoading: the node is loading its dataset after a restart.
	KindLoading ErrorKind = "loading"
	// KindClusterDown: the Cluster has a slot without a master
	// (CLUSTERDOWN), between a master's failure and its replica's
	// promotion.
	KindClusterDown ErrorKind = "clusterdown"
	// KindTryAgain: a Cluster slot is being moved (TRYAGAIN).
	KindTryAgain ErrorKind = "tryagain"
	// KindNoReplicas: the master has fewer good replicas than
	// min-replicas-to-write and refuses writes (NOREPLICAS): it may be
	// cut off from the rest, the split-brain guard at work.
	KindNoReplicas ErrorKind = "noreplicas"
	// KindOOM: Redis is out of memory (maxmemory with noeviction).
	KindOOM ErrorKind = "oom"
	// KindBusy: a script ran past busy-reply-threshold (BUSY).
	KindBusy ErrorKind = "busy"
	// KindOther: any other error reply, or a reply this code did not
	// expect.
	KindOther ErrorKind = "other"
)

// ErrorKinds is every ErrorKind, for declaring the metric's series up front.
var ErrorKinds = []ErrorKind{KindUnreachable, KindReadOnly, KindMasterDown, KindLoading, KindClusterDown,
	KindTryAgain, KindNoReplicas, KindOOM, KindBusy, KindOther}

// FailingOver reports whether k is what a Redis answers while a failover
// is under way: the store has no master that takes writes for now.
func (k ErrorKind) FailingOver() bool {
	switch k {
	case KindReadOnly, KindMasterDown, KindLoading, KindClusterDown, KindTryAgain, KindNoReplicas:
		return true
	}
	return false
}

// KindOf sorts err, an error of a call to Redis (wrapped or not).
func KindOf(err error) ErrorKind {
	var re redis.Error
	if errors.As(err, &re) {
		switch {
		case redis.IsReadOnlyError(err):
			return KindReadOnly
		case redis.IsMasterDownError(err):
			return KindMasterDown
		case redis.IsLoadingError(err):
			return KindLoading
		case redis.IsClusterDownError(err):
			return KindClusterDown
		case redis.IsTryAgainError(err):
			return KindTryAgain
		case redis.HasErrorPrefix(err, "NOREPLICAS"):
			return KindNoReplicas
		case redis.IsOOMError(err):
			return KindOOM
		case redis.HasErrorPrefix(err, "BUSY"):
			return KindBusy
		}
		return KindOther
	}
	var ne net.Error
	switch {
	case errors.As(err, &ne), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, redis.ErrPoolTimeout),
		errors.Is(err, net.ErrClosed), isEOF(err):
		return KindUnreachable
	}
	return KindOther
}

// isEOF is a connection Redis closed under a read: io.EOF and its
// unexpected twin, matched by text as go-redis wraps them in several ways.
func isEOF(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if s := e.Error(); s == "EOF" || s == "unexpected EOF" {
			return true
		}
	}
	return false
}

// State is the store's condition as /readyz and the dashboard name it,
// after a call that returned err (nil: it answered).
func (s *Store) State(err error) waitroom.StoreState {
	if err == nil {
		return waitroom.StoreOK
	}
	return s.stateOf(KindOf(err))
}

// LastState is State of the last failed call: what a store that fails now
// is going through. StoreOK when no call has failed yet.
func (s *Store) LastState() waitroom.StoreState {
	k, at := s.LastError()
	if at.IsZero() {
		return waitroom.StoreOK
	}
	return s.stateOf(k)
}

func (s *Store) stateOf(k ErrorKind) waitroom.StoreState {
	if k.FailingOver() || (k == KindUnreachable && s.replicated) {
		// With Sentinel or a Cluster a master that does not answer is
		// what a failover starts with: its replicas stand by to take
		// over, and calls are held until one has.
		return waitroom.StoreFailingOver
	}
	return waitroom.StoreUnreachable
}

// lastError is the kind and time of the store's last failed call.
type lastError struct {
	kind atomic.Value // ErrorKind
	at   atomic.Int64 // unix nanoseconds; 0: none yet
}

// LastError is the kind of the store's last failed call and when it
// happened; the zero time when none has failed.
func (s *Store) LastError() (ErrorKind, time.Time) {
	at := s.last.at.Load()
	if at == 0 {
		return "", time.Time{}
	}
	k, _ := s.last.kind.Load().(ErrorKind)
	return k, time.Unix(0, at)
}

// noteError records a failed call: its kind for LastError and for
// Events.Error. Called from failure, once per failed call.
func (s *Store) noteError(err error) {
	k := KindOf(err)
	s.last.kind.Store(k)
	s.last.at.Store(time.Now().UnixNano())
	if f := s.events.Error; f != nil {
		f(k)
	}
}
