package memstore

import (
	"time"

	"github.com/waitroom/waitroom/waitroom"
)

// issue hands a newcomer a ticket (waitroom.JoinTicket): a number, and a
// session at once when the room has room; the place is written when the
// ticket comes back (place). Refused past MaxWaiting or when the network
// has no place left this period; the number itself counts nothing against
// the quota, the place does. Past the network's PendingPerNetwork the
// ticket is loose: no number, counted by nobody, a place at the back when
// it comes back (placeLoose).
func (r *room) issue(now time.Time, lim waitroom.Limits, v waitroom.Visitor) waitroom.Decision {
	if lim.MaxWaiting > 0 && int64(r.line.len()) >= lim.MaxWaiting {
		r.totals.Full++
		return waitroom.Decision{Refusal: waitroom.RefusedFull}
	}
	ok, retry, recent := r.charge(now, lim, v, 1, false)
	if !ok {
		r.totals.Limited++
		return waitroom.Decision{Refusal: waitroom.RefusedQuota, RetryAfter: retry, Recent: recent}
	}
	ticket := r.next(lim)
	if d, ok := r.admitAtOnce(now, lim, v.ID, v.Network, ticket); ok {
		r.win.use(ticket)
		_, _, d.Recent = r.charge(now, lim, v, 1, true)
		return d
	}
	if r.loose(now, lim, v, false) {
		r.win.use(ticket) // counted by nobody
		return waitroom.Decision{State: waitroom.StateWaiting, Joined: true, Recent: recent}
	}
	// Behind everyone placed and every ticket ahead that may still come
	// back: the place this ticket will take.
	n := int64(r.line.len()) + r.win.pendingBelow(ticket) + 1
	return waitroom.Decision{State: waitroom.StateWaiting, Ticket: ticket, Position: n, Line: n, Joined: true, Recent: recent}
}

// loose spends a unit of each pending allowance v meets, a placement
// window each: its network's (waitroom.PendingPerNetwork), its client's
// inside it (waitroom.PendingPerClient, so one address of a NAT cannot
// take the network's all) and its block's (BlockFactor times the
// network's, so a flood spread over a block's networks adds up to no
// more). Past any of them nothing is spent and the ticket or the
// challenge's number is loose: nobody counts it. As decide.lua's loose.
// The client's bound is for challenges only (perClient), as there.
func (r *room) loose(now time.Time, lim waitroom.Limits, v waitroom.Visitor, perClient bool) bool {
	if v.Network == "" || lim.JoinLimit.IsUnlimited() {
		return false
	}
	per := lim.PlacementWindow()
	type allowance struct {
		key   string
		limit waitroom.Rate
	}
	all := []allowance{{"pending\x01" + v.Network, waitroom.Rate{N: waitroom.PendingPerNetwork, Per: per}}}
	if perClient && v.Client != "" && v.Client != v.Network {
		all = append(all, allowance{"pendingc\x01" + v.Client, waitroom.Rate{N: waitroom.PendingPerClient, Per: per}})
	}
	if v.Block != "" {
		all = append(all, allowance{"pendingb\x01" + v.Block, waitroom.Rate{N: waitroom.PendingPerNetwork * waitroom.BlockFactor, Per: per}})
	}
	for _, a := range all {
		every := a.limit.Per / time.Duration(a.limit.N)
		if r.quotaAt(a.key, now).Sub(now) > every*time.Duration(a.limit.N-1) {
			return true
		}
	}
	for _, a := range all {
		r.spend(now, a.key, a.limit, false)
	}
	return false
}

// number takes a number for a challenge (waitroom.JoinNumber), refused
// past its network's wider ceiling: whatever work would follow, a network
// takes no more numbers than that.
func (r *room) number(now time.Time, lim waitroom.Limits, v waitroom.Visitor) waitroom.Decision {
	if lim.MaxWaiting > 0 && int64(r.line.len()) >= lim.MaxWaiting {
		r.totals.Full++
		return waitroom.Decision{Refusal: waitroom.RefusedFull}
	}
	ok, retry, recent := r.charge(now, lim, v, waitroom.ChallengeJoinFactor, false)
	if !ok {
		r.totals.Limited++
		return waitroom.Decision{Refusal: waitroom.RefusedQuota, RetryAfter: retry, Recent: recent}
	}
	if r.loose(now, lim, v, true) {
		return waitroom.Decision{Recent: recent} // no number: solved, it places at the back
	}
	return waitroom.Decision{Ticket: r.next(lim), Recent: recent}
}

// next is the next ticket number; a pre-queue's are marked for its draw.
func (r *room) next(lim waitroom.Limits) int64 {
	r.seq++
	r.totals.Issued++
	if lim.Prequeue {
		if r.preqMin == 0 {
			r.preqMin = r.seq
		}
		r.preqMax = r.seq
	}
	return r.seq
}

// place writes the place of a ticket handed out earlier (v.Placed false),
// once per ticket and while it is young (Limits.PlaceWithin): a ticket
// used before (its holder left, was let in, or stopped polling) must not
// buy its old place again, and one that comes back later than the window
// is counted by nobody any more. A solved challenge's is placed as solve
// says. ok is false when the ticket buys nothing; the caller then treats
// its holder as anyone new.
func (r *room) place(now time.Time, lim waitroom.Limits, v waitroom.Visitor) (waitroom.Decision, bool) {
	t := v.Ticket
	if t > r.seq {
		return waitroom.Decision{}, false
	}
	if v.Challenge != "" {
		return r.solve(now, lim, v)
	}
	// A number the last repair skipped may have been handed out by the
	// store that lost it: placed by number, once (see learn).
	gap := false
	if _, again := r.restored[v.ID]; r.mend > 0 && t <= r.mend && t > r.skip && !again {
		r.restored[v.ID] = struct{}{}
		gap = true
	}
	if now.Sub(v.Issued) > lim.PlacementWindow() || !(gap || r.win.placeable(t)) {
		return waitroom.Decision{}, false
	}
	if ok, retry, recent := r.charge(now, lim, v, 1, true); !ok {
		r.totals.Limited++
		return waitroom.Decision{Refusal: waitroom.RefusedQuota, RetryAfter: retry, Recent: recent}, true
	}
	r.win.use(t)
	return r.seat(now, lim, v, t), true
}

// placeLoose places a loose ticket (waitroom.Visitor.Loose) brought back
// within the placement window: at the back, since nobody counted it,
// against its network's quota like any other place.
func (r *room) placeLoose(now time.Time, lim waitroom.Limits, v waitroom.Visitor) (waitroom.Decision, bool) {
	if now.Sub(v.Issued) > lim.PlacementWindow() {
		return waitroom.Decision{}, false
	}
	if ok, retry, recent := r.charge(now, lim, v, 1, true); !ok {
		r.totals.Limited++
		return waitroom.Decision{Refusal: waitroom.RefusedQuota, RetryAfter: retry, Recent: recent}, true
	}
	t := r.next(lim)
	r.win.use(t)
	return r.seat(now, lim, v, t), true
}

// solve places the number of a solved challenge, once (spent), while the
// challenge lives (v.ChallengeUntil, the room's challenge_ttl): at its
// number within the placement window, else at the back, since the places
// behind its number stopped counting it and must not grow.
func (r *room) solve(now time.Time, lim waitroom.Limits, v waitroom.Visitor) (waitroom.Decision, bool) {
	if now.After(v.ChallengeUntil) {
		return waitroom.Decision{}, false
	}
	// The place counts against the network's ceiling: past it the
	// challenge is not spent.
	if ok, retry, recent := r.charge(now, lim, v, waitroom.ChallengeJoinFactor, false); !ok {
		r.totals.Limited++
		return waitroom.Decision{Refusal: waitroom.RefusedQuota, RetryAfter: retry, Recent: recent}, true
	}
	if _, used := r.spent[v.Challenge]; used {
		return waitroom.Decision{Refusal: waitroom.RefusedChallenge}, true
	}
	r.spent[v.Challenge] = v.ChallengeUntil
	r.charge(now, lim, v, waitroom.ChallengeJoinFactor, true)
	t := v.Ticket
	if !r.win.use(t) {
		t = r.next(lim)
		r.win.use(t)
	}
	return r.seat(now, lim, v, t), true
}

// seat lets the holder of ticket t in at once when the room has room, or
// writes its place in line.
func (r *room) seat(now time.Time, lim waitroom.Limits, v waitroom.Visitor, t int64) waitroom.Decision {
	if d, ok := r.admitAtOnce(now, lim, v.ID, v.Network, t); ok {
		return d
	}
	r.totals.Joined++
	w := &waiter{id: v.ID, ticket: t}
	r.line.insert(w)
	r.seen.pushBack(w, now)
	r.waiting[v.ID] = w
	return r.waitingDecision(w, true)
}

// restore puts back a ticket older than the room's seed: the store lost
// its data while its holder was in line or inside. Only a ticket seen
// within AbandonAfter of the loss, once per visitor; one that was inside
// goes back inside only while a slot is free (it counts like anyone
// inside), else to its place at the front of the line. The first restore
// starts the recovery grace. ok is false when the ticket buys nothing.
//
// After a repair (learn) the same holds for a ticket of this incarnation
// up to the repair's counter whose place or session is gone, the loss
// being the repair (full false): the hold the repair began stands in for
// the grace.
func (r *room) restore(now time.Time, lim waitroom.Limits, v waitroom.Visitor, loss time.Time, full bool) (waitroom.Decision, bool) {
	if _, again := r.restored[v.ID]; again {
		return waitroom.Decision{}, false
	}
	inside := v.Until.After(now)
	if !inside && lim.AbandonAfter > 0 && v.Seen.Before(loss.Add(-lim.AbandonAfter)) {
		return waitroom.Decision{}, false // a hoarded ticket, long unseen
	}
	r.restored[v.ID] = struct{}{}
	r.win.use(v.Ticket) // no longer pending: it is placed or inside
	started := full && r.graceUntil.IsZero() && lim.RecoveryGrace > 0
	if started {
		r.graceUntil = now.Add(lim.RecoveryGrace)
	}
	r.totals.Joined++
	if inside && r.active.len() < lim.MaxActive {
		s := r.active.add(v.ID, v.Ticket, minTime(v.Until, now.Add(lim.SessionTTL)))
		// It began when its cookie says (zero when it does not), before
		// the loss: ReleaseAt's began compares with that.
		if !v.Entered.IsZero() {
			s.began = minTime(v.Entered, now)
		}
		return waitroom.Decision{State: waitroom.StateAdmitted, Ticket: v.Ticket, Until: s.until, Joined: true, Placed: true,
			Restored: waitroom.RestoreInside, GraceStarted: started}, true
	}
	r.totals.Joined-- // admitAtOnce and the line count it again
	if d, ok := r.admitAtOnce(now, lim, v.ID, v.Network, v.Ticket); ok {
		d.Restored, d.GraceStarted = waitroom.RestoreWaiting, started
		return d, true
	}
	r.totals.Joined++
	w := &waiter{id: v.ID, ticket: v.Ticket}
	r.line.insert(w)
	r.seen.pushBack(w, now)
	r.waiting[v.ID] = w
	d := r.waitingDecision(w, true)
	d.Restored, d.GraceStarted = waitroom.RestoreWaiting, started
	return d, true
}

// charge counts a place taken against its network's quota and its
// block's, GCRAs over lim.JoinLimit: each place moves the network's time
// on by Per/N, and a place is within the quota while that time runs less
// than burst·N-1 intervals ahead of now (burst·N at once, then N per
// Per); the block's runs BlockFactor times as fast with BlockFactor times
// the burst. A place past either is refused and moves nothing; without
// commit nothing moves either way (a newcomer's number, which counts
// nothing until its ticket comes back). It reports whether the place is
// within both, when it would be, and how many intervals the network is
// ahead: its recent places.
func (r *room) charge(now time.Time, lim waitroom.Limits, v waitroom.Visitor, burst int64, commit bool) (bool, time.Duration, int64) {
	limit := lim.JoinLimit
	if limit.IsUnlimited() || v.Network == "" {
		return true, 0, 0
	}
	every := limit.Per / time.Duration(limit.N)
	tat := r.quotaAt(v.Network, now)
	ahead := tat.Sub(now)
	wait := ahead - every*time.Duration(burst*limit.N-1)
	block, bevery, btat := "", every/waitroom.BlockFactor, time.Time{}
	if v.Block != "" {
		block = "block\x01" + v.Block
		btat = r.quotaAt(block, now)
		wait = max(wait, btat.Sub(now)-bevery*time.Duration(burst*limit.N*waitroom.BlockFactor-1))
	}
	if wait > 0 {
		return false, wait, ceilDiv(ahead, every)
	}
	if !commit {
		return true, 0, ceilDiv(ahead, every)
	}
	r.quota[v.Network] = tat.Add(every)
	if block != "" {
		r.quota[block] = btat.Add(bevery)
	}
	return true, 0, ceilDiv(ahead+every, every)
}

// quotaAt is key's GCRA time, never before now.
func (r *room) quotaAt(key string, now time.Time) time.Time {
	if tat := r.quota[key]; tat.After(now) {
		return tat
	}
	return now
}

// ceilDiv is d/every rounded up.
func ceilDiv(d, every time.Duration) int64 { return int64((d + every - 1) / every) }

// spend is the GCRA behind Store.Allow, over r.quota[key]; its keys carry
// their kind, so none collides with a network's or a block's.
func (r *room) spend(now time.Time, key string, limit waitroom.Rate, refuse bool) (bool, time.Duration, int64) {
	if limit.IsUnlimited() || key == "" {
		return true, 0, 0
	}
	every := limit.Per / time.Duration(limit.N)
	tat := r.quota[key]
	if tat.Before(now) {
		tat = now
	}
	slack := every * time.Duration(limit.N-1)
	ahead := tat.Sub(now)
	if refuse && ahead > slack {
		return false, ahead - slack, int64((ahead + every - 1) / every)
	}
	tat = tat.Add(every)
	r.quota[key] = tat
	return ahead <= slack, 0, int64((tat.Sub(now) + every - 1) / every)
}

// pruneMarks moves the placement window on and drops quota times, spent
// challenges and sockets that are over, so none of them grows with the
// tickets that never came back or the sockets nobody closed.
func (r *room) pruneMarks(now time.Time, lim waitroom.Limits) {
	r.win.advance(now, r.seq, lim.PlacementWindow())
	for network, tat := range r.quota {
		if !tat.After(now) {
			delete(r.quota, network)
		}
	}
	for id, until := range r.spent {
		if until.Before(now) {
			delete(r.spent, id)
		}
	}
	for visitor := range r.sockets {
		if x := r.active.get(visitor); x == nil || !x.until.After(now) {
			delete(r.sockets, visitor)
		}
	}
}

// What a repair does (redisstore's mend): the counter moves repairJump
// past the highest ticket known, and for repairHold (at most the recovery
// grace) nobody new goes in.
const (
	repairJump = 1024
	repairHold = time.Second
	mendMax    = 1 << 20
)

// learn is the repair of a store that lost its last writes, which a
// memory store never does but a caller may still tell it of: a ticket of
// this incarnation above the counter, or v.Known above it, moves the
// counter repairJump past it (ticket: the one the store holds for a
// visitor in line, else the one its cookie carries); the numbers skipped after the highest known
// count for nobody (a holder brought back is placed by number, once: see
// place), those up to it stay pending; tickets up to the new counter
// whose place or session is gone are put back (restore); nobody new goes
// in for repairHold. A room whose caller knows tickets older than its data
// (known below the seed) lost it: the recovery grace starts at once.
func (r *room) learn(now time.Time, lim waitroom.Limits, known, ticket int64) {
	if known > 0 && known < r.seed && lim.RecoveryGrace > 0 && r.graceUntil.IsZero() {
		r.graceUntil = now.Add(lim.RecoveryGrace)
		r.started = true
	}
	// A number more than mendMax past the counter is no lost join but a
	// ticket of another store sealed with the same keys: it moves nothing.
	hi := int64(0)
	for _, n := range [...]int64{known, ticket} {
		if n > hi && n >= r.seed && n-r.seq <= mendMax {
			hi = n
		}
	}
	if hi <= r.seq {
		return
	}
	to := hi + repairJump
	for t := hi + 1; t <= to; t++ {
		r.win.use(t)
	}
	r.seq, r.mend, r.skip, r.lost = to, to, hi, now
	r.totals.Repairs++
	r.repaired = true
	if hold := now.Add(min(repairHold, lim.RecoveryGrace)); hold.After(r.graceUntil) {
		r.graceUntil = hold
	}
}
