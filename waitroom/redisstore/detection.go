package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Detection is how long the deployment waits before it calls a master
// dead and promotes a replica, as its own nodes say: Sentinel's
// down-after-milliseconds for the master, or a Cluster's
// cluster-node-timeout. A failover cannot end sooner, so whatever must
// hold through one (store.open_after) starts from this.
type Detection struct {
	// After is the detection time: the largest any answering node gave.
	After time.Duration
	// FailoverTimeout is Sentinel's failover-timeout (0 on a Cluster):
	// how long the sentinels wait before they retry a failover that
	// stalled. Informative: a failover that succeeds ends long before it.
	FailoverTimeout time.Duration
	// Source says where After came from, for logs and `waitroom check`:
	// the setting's name and the address (host:port, never credentials)
	// of the node that gave it.
	Source string
}

// maxDetection bounds a figure a node reports: past an hour, the reply
// is not a setting anyone runs, and open_after must not follow it.
const maxDetection = time.Hour

// detectionDial bounds each connection the query makes, whatever
// dial_timeout and read_timeout say: the query runs at start, and a
// gateway must not wait on it for long.
const detectionDial = time.Second

// errNotReplicated: DetectFailover was asked of one Redis server, where
// no failover happens.
var errNotReplicated = errors.New("neither a Sentinel group nor a Cluster: no failover to detect")

// DetectFailover asks the deployment c names for its detection time: each
// sentinel (SENTINEL MASTER <master_name>) or each Cluster node given in
// addrs (CONFIG GET cluster-node-timeout), all at once, and keeps the
// largest answer (the slowest node decides when a failover can start). It
// returns within ctx's deadline and detectionDial of each connection; the
// error joins every node's when none answered (unreachable, an ACL that
// refuses CONFIG, a managed service that renames it, an unknown master).
func DetectFailover(ctx context.Context, c Config) (Detection, error) {
	opts, err := c.options()
	if err != nil {
		return Detection{}, err
	}
	if opts.MasterName == "" && len(opts.Addrs) < 2 {
		return Detection{}, errNotReplicated
	}
	type answer struct {
		d   Detection
		err error
	}
	answers := make([]answer, len(opts.Addrs))
	var wg sync.WaitGroup
	for i, addr := range opts.Addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := detectOne(ctx, opts, addr)
			if err != nil {
				err = fmt.Errorf("%s: %w", addr, err)
			}
			answers[i] = answer{d, err}
		}()
	}
	wg.Wait()
	var best Detection
	var errs []error
	for _, a := range answers {
		switch {
		case a.err != nil:
			errs = append(errs, a.err)
		case a.d.After > best.After:
			best = a.d
		}
	}
	if best.After == 0 {
		return Detection{}, errors.Join(errs...)
	}
	return best, nil
}

// detectOne asks one sentinel or one Cluster node, on a connection of its
// own that the call closes: with the sentinels' credentials (none: the
// store's client sends none to them either) or the data nodes'.
func detectOne(ctx context.Context, opts *redis.UniversalOptions, addr string) (Detection, error) {
	o := &redis.Options{
		Addr: addr, TLSConfig: opts.TLSConfig,
		DialTimeout: min(opts.DialTimeout, detectionDial), ReadTimeout: min(opts.ReadTimeout, detectionDial),
		WriteTimeout: min(opts.WriteTimeout, detectionDial), ContextTimeoutEnabled: true,
		MaxRetries: -1, DialerRetries: 1, PoolSize: 1,
	}
	if opts.MasterName != "" {
		o.Username, o.Password = opts.SentinelUsername, opts.SentinelPassword
		sc := redis.NewSentinelClient(o)
		defer sc.Close()
		m, err := sc.Master(ctx, opts.MasterName).Result()
		if err != nil {
			return Detection{}, err
		}
		after, err := millis(m, "down-after-milliseconds")
		if err != nil {
			return Detection{}, err
		}
		// failover-timeout only informs; a reply without it is still one.
		timeout, _ := millis(m, "failover-timeout")
		return Detection{After: after, FailoverTimeout: timeout,
			Source: fmt.Sprintf("Sentinel %s: down-after-milliseconds of %q", addr, opts.MasterName)}, nil
	}
	o.Username, o.Password = opts.Username, opts.Password
	cl := redis.NewClient(o)
	defer cl.Close()
	m, err := cl.ConfigGet(ctx, "cluster-node-timeout").Result()
	if err != nil {
		return Detection{}, err
	}
	after, err := millis(m, "cluster-node-timeout")
	if err != nil {
		return Detection{}, err
	}
	return Detection{After: after, Source: fmt.Sprintf("Cluster node %s: cluster-node-timeout", addr)}, nil
}

// millis reads the field key of a reply as milliseconds, within
// (0, maxDetection].
func millis(m map[string]string, key string) (time.Duration, error) {
	v, ok := m[key]
	if !ok {
		return 0, fmt.Errorf("the reply has no %s", key)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n <= 0 || n > maxDetection.Milliseconds() {
		return 0, fmt.Errorf("%s %.20q is not a number of milliseconds from 1 to %d", key, v, maxDetection.Milliseconds())
	}
	return time.Duration(n) * time.Millisecond, nil
}
