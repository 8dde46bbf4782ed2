package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/waitroom/waitroom/waitroom"
	"github.com/waitroom/waitroom/waitroom/conf"
	"github.com/waitroom/waitroom/waitroom/redisstore"
)

// failoverMargin is added to the deployment's detection time (Sentinel's
// down-after-milliseconds, a Cluster's cluster-node-timeout) to make the
// shortest store.open_after that holds a failover. After the detection
// time come the agreement (Sentinel's quorum asks the others every
// second; a Cluster's PFAIL becomes FAIL by gossip), the election and
// promotion (a Cluster replica waits 500 ms plus up to 500 ms plus a
// second per rank), and the clients finding the new master (go-redis on
// +switch-master, or topologyHook's slot-map reload every 250 ms). Issue
// 22 measured 1.4 s to the promotion and 0.9 s more to admissions back on
// loopback; 5 s leaves twice that for a busy host or a real network.
const failoverMargin = 5 * time.Second

// detectTimeout bounds asking the deployment for its detection time, at
// start and in `waitroom check`: sentinels that do not answer must not
// hold a gateway's start for long (redisstore.DetectFailover also bounds
// each connection).
const detectTimeout = 1500 * time.Millisecond

// maxDetectError bounds how much of the nodes' joined errors a warning
// carries.
const maxDetectError = 300

// failoverFigure is the shortest store.open_after that holds a failover
// of the configured store, and where it comes from. The zero value: no
// failover (one Redis server, or the memory store).
type failoverFigure struct {
	// hold is max(failoverOpenAfter, the detection time + failoverMargin),
	// or failoverOpenAfter when the detection time is not known.
	hold time.Duration
	// det is what the deployment said (learned), or nothing.
	det     redisstore.Detection
	learned bool
	// err is why the deployment was asked and did not say.
	err error
}

// staticFailover is the figure before (or without) asking: the
// failoverOpenAfter floor with Sentinel or a Cluster.
func staticFailover(s StoreConfig) failoverFigure {
	if !s.replicated() {
		return failoverFigure{}
	}
	return failoverFigure{hold: failoverOpenAfter}
}

// learnFailover asks the deployment s names for its detection time, within
// detectTimeout. It never fails: a deployment that does not say (the
// sentinels unreachable, an ACL or a managed service refusing CONFIG)
// gives the failoverOpenAfter floor and the reason.
func learnFailover(s StoreConfig) failoverFigure {
	f := staticFailover(s)
	if f.hold == 0 {
		return f
	}
	ctx, cancel := context.WithTimeout(context.Background(), detectTimeout)
	defer cancel()
	d, err := redisstore.DetectFailover(ctx, s.Redis)
	if err != nil {
		f.err = err
		return f
	}
	f.det, f.learned = d, true
	f.hold = max(failoverOpenAfter, d.After+failoverMargin)
	return f
}

// source says where hold comes from, for the warnings, the log and
// `waitroom check`.
func (f failoverFigure) source() string {
	switch {
	case f.learned && f.det.After+failoverMargin >= failoverOpenAfter:
		return fmt.Sprintf("%s %s + %s margin", f.det.Source, conf.Short(f.det.After), conf.Short(failoverMargin))
	case f.learned:
		return fmt.Sprintf("the %s floor; %s %s + %s margin is less", conf.Short(failoverOpenAfter),
			f.det.Source, conf.Short(f.det.After), conf.Short(failoverMargin))
	case f.err != nil:
		return fmt.Sprintf("the %s floor, as the deployment's detection time could not be read", conf.Short(failoverOpenAfter))
	default:
		return fmt.Sprintf("the %s floor with Sentinel or a Cluster", conf.Short(failoverOpenAfter))
	}
}

// useFailover puts f in service in s: the default store.open_after
// follows it when the file leaves the key empty, and the store's warnings
// are said again with it. The configuration's store section must be the
// one f was learned for (a reload keeps the running store's: keepRunning).
func (s *Settings) useFailover(f failoverFigure) {
	s.failover = f
	if s.Store.OpenAfter == "" {
		s.openAfter = defaultOpenAfter
		if f.hold > 0 {
			s.openAfter = f.hold
		}
	}
	kept := s.warnings[:0:0]
	for _, w := range s.warnings {
		if !strings.HasPrefix(w, storeWarningPrefix) {
			kept = append(kept, w)
		}
	}
	s.warnings = append(kept, s.Store.warnings(s.openAfter, f)...)
}

// storeWarningPrefix starts every warning StoreConfig.warnings makes, so
// useFailover replaces them rather than adding to them.
const storeWarningPrefix = "store.open_after "

// warnings are what the store section allows but an operator should hear
// about, at start and in `waitroom check`, with on_error open under
// Sentinel or a Cluster: an open_after shorter than a failover (f.hold)
// opens the room to everyone while a replica is promoted; a default that
// could not follow the deployment's detection time may be that short.
func (s StoreConfig) warnings(openAfter time.Duration, f failoverFigure) []string {
	if waitroom.OutagePolicy(s.OnError) != waitroom.OutageOpen || f.hold == 0 {
		return nil
	}
	var out []string
	if openAfter < f.hold {
		out = append(out, fmt.Sprintf(storeWarningPrefix+"%s is shorter than a failover (%s: %s): "+
			"on_error open lets everyone in while a replica is promoted; see docs/reliability.md",
			conf.Short(openAfter), conf.Short(f.hold), f.source()))
	}
	if f.err != nil && s.OpenAfter == "" {
		// One line: the nodes' errors, joined by newlines, become "; ".
		msg := strings.Join(strings.Fields(strings.ReplaceAll(f.err.Error(), "\n", " ; ")), " ")
		msg = strings.ReplaceAll(msg, " ; ", "; ")
		if len(msg) > maxDetectError {
			msg = strings.ToValidUTF8(msg[:maxDetectError], "") + "…"
		}
		out = append(out, fmt.Sprintf(storeWarningPrefix+"defaults to %s, but the failover detection time could not be read (%s): "+
			"if the sentinels' down-after-milliseconds (or the Cluster's cluster-node-timeout) is above %s, "+
			"set store.open_after to it plus %s; see docs/reliability.md",
			conf.Short(openAfter), msg, conf.Short(failoverOpenAfter-failoverMargin), conf.Short(failoverMargin)))
	}
	return out
}

// openAfterSource says where the effective store.open_after comes from,
// for `waitroom check`.
func (s *Settings) openAfterSource() string {
	switch {
	case s.Store.OpenAfter != "":
		return "set in the file"
	case s.failover.hold > 0:
		return s.failover.source()
	case s.Store.Kind == "redis":
		return "the default on one Redis server"
	default:
		return "the default; the memory store never fails"
	}
}
