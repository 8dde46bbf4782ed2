package redistest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// clusterView is one node's CLUSTER NODES: who is master of which slots,
// who replicates whom. Nodes disagree while a failover spreads, so callers
// ask several.
type clusterView struct {
	self      string              // the asked node's address
	role      map[string]string   // address -> "master" or "slave"
	failed    map[string]bool     // flagged fail (not just pfail)
	replicaOf map[string]string   // replica address -> master address
	slots     map[string][][2]int // master address -> its slot ranges
	epoch     map[string]int64    // address -> config epoch
}

func (v clusterView) masters() []string {
	var out []string
	for a, r := range v.role {
		if r == "master" && len(v.slots[a]) > 0 {
			out = append(out, a)
		}
	}
	return out
}

// owner is the master of slot in this view, or "".
func (v clusterView) owner(slot int) string {
	for a, rs := range v.slots {
		if v.role[a] != "master" {
			continue
		}
		for _, r := range rs {
			if slot >= r[0] && slot <= r[1] {
				return a
			}
		}
	}
	return ""
}

// view reads node n's CLUSTER NODES.
func (c *Cluster) view(ctx context.Context, n *Node) (clusterView, error) {
	v, err := n.query(ctx, "CLUSTER", "NODES")
	if err != nil {
		return clusterView{}, err
	}
	text, ok := v.(string)
	if !ok {
		return clusterView{}, fmt.Errorf("redistest: CLUSTER NODES on %s: got %T", n.addr, v)
	}
	cv := clusterView{self: n.addr, role: map[string]string{}, failed: map[string]bool{},
		replicaOf: map[string]string{}, slots: map[string][][2]int{}, epoch: map[string]int64{}}
	byID := map[string]string{}
	type line struct{ addr, flags, master string }
	var lines []line
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		f := strings.Fields(l)
		if len(f) < 8 {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		byID[f[0]] = addr
		lines = append(lines, line{addr, f[2], f[3]})
		flags := "," + f[2] + ","
		switch {
		case strings.Contains(flags, ",master,"):
			cv.role[addr] = "master"
		case strings.Contains(flags, ",slave,"):
			cv.role[addr] = "slave"
		}
		cv.failed[addr] = strings.Contains(flags, ",fail,")
		cv.epoch[addr], _ = strconv.ParseInt(f[6], 10, 64)
		for _, s := range f[8:] {
			if strings.HasPrefix(s, "[") {
				continue // a slot migrating: not in these tests
			}
			lo, hi, found := strings.Cut(s, "-")
			if !found {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 == nil && err2 == nil {
				cv.slots[addr] = append(cv.slots[addr], [2]int{a, b})
			}
		}
	}
	for _, l := range lines {
		if cv.role[l.addr] == "slave" && l.master != "-" {
			cv.replicaOf[l.addr] = byID[l.master]
		}
	}
	return cv, nil
}

func (c *Cluster) node(addr string) *Node {
	for _, n := range c.nodes {
		if n.addr == addr {
			return n
		}
	}
	return nil
}

// slot asks a live node for key's hash slot.
func (c *Cluster) slot(ctx context.Context, key string) (int, error) {
	var last error
	for _, n := range c.nodes {
		if !n.alive() {
			continue
		}
		v, err := n.query(ctx, "CLUSTER", "KEYSLOT", key)
		if err != nil {
			last = err
			continue
		}
		if s, ok := v.(int64); ok {
			return int(s), nil
		}
	}
	return 0, fmt.Errorf("redistest: no live node gave the slot of %q: %v", key, last)
}

// MasterForKey is the node serving key's slot now: of the live nodes that
// say they are its master, the one with the highest config epoch (the
// Cluster's own rule; a thawed old master claims the slot until it hears
// otherwise); when none does (the master died, no replica took over yet),
// the master the most live nodes name. Nil when no live node answers.
func (c *Cluster) MasterForKey(key string) *Node {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	slot, err := c.slot(ctx, key)
	if err != nil {
		return nil
	}
	votes := map[string]int{}
	best, claim := "", ""
	var claimEpoch int64 = -1
	for _, n := range c.nodes {
		if !n.alive() {
			continue
		}
		v, err := c.view(ctx, n)
		if err != nil {
			continue
		}
		o := v.owner(slot)
		if o == "" {
			continue
		}
		if o == n.addr && v.epoch[o] > claimEpoch {
			claim, claimEpoch = o, v.epoch[o]
		}
		votes[o]++
		if votes[o] > votes[best] {
			best = o
		}
	}
	if claim != "" {
		return c.node(claim)
	}
	return c.node(best)
}

// ReplicasOf are the nodes replicating n, as n says when it answers, or
// as the first other live node says.
func (c *Cluster) ReplicasOf(n *Node) []*Node {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	asks := []*Node{n}
	asks = append(asks, c.nodes...)
	for _, a := range asks {
		if !a.alive() {
			continue
		}
		v, err := c.view(ctx, a)
		if err != nil {
			continue
		}
		var out []*Node
		for _, r := range c.nodes {
			if v.replicaOf[r.addr] == n.addr {
				out = append(out, r)
			}
		}
		return out
	}
	return nil
}

// WaitPromoted waits until a node other than old serves key's slot: it
// says itself it is the slot's master (so it takes writes), and returns it
// with the time this was first seen (polled every 20 ms).
func (c *Cluster) WaitPromoted(ctx context.Context, key string, old *Node) (*Node, time.Time, error) {
	if old == nil {
		return nil, time.Time{}, fmt.Errorf("redistest: WaitPromoted from no node")
	}
	slot, err := c.slot(ctx, key)
	if err != nil {
		return nil, time.Time{}, err
	}
	var to *Node
	err = poll(ctx, "a new master for "+key, func() (bool, error) {
		for _, n := range c.nodes {
			if n == old || !n.alive() {
				continue
			}
			v, err := c.view(ctx, n)
			if err != nil {
				continue
			}
			if v.owner(slot) == n.addr {
				to = n
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, time.Time{}, err
	}
	return to, time.Now(), nil
}
