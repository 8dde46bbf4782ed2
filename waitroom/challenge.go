package waitroom

import (
	"net/http"
	"time"

	"github.com/waitroom/waitroom/waitroom/challenge"
)

// ChallengeHeader carries a solved proof of work: "<prefix>:<nonce>".
const ChallengeHeader = "Waitroom-Challenge"

// newcomer answers a request that may join a room with a challenge. A
// ticket that holds neither a place nor a session any more (its holder
// left, stopped polling, or its session ended) is a newcomer too: work
// paid once is not spent again on a new number later, so a stock of old
// tickets buys nothing at the sale.
func (g *Gate) newcomer(w http.ResponseWriter, r *http.Request, vt visit, lim Limits, now time.Time) (visit, error) {
	if !vt.p.Valid {
		return g.challenged(w, r, vt, lim, now)
	}
	vt, err := g.settle(w, r, vt, lim, JoinNone, now)
	if err != nil || vt.refused != "" || vt.d.State != StateNone {
		return vt, err
	}
	return g.challenged(w, r, vt, lim, now)
}

// challenged answers a newcomer of a room with a challenge: a solved one
// spends its challenge and places its solver at the number the challenge
// carried; anyone else takes a number and gets work to do, harder the more
// tickets its network took ahead of its pace and the faster the line grows.
// The number is taken now, so a slow phone loses no place to a fast PC
// within the placement window; the challenge lives the room's
// challenge_ttl, and solved later it places at the back.
// A network past its ceiling (ChallengeJoinFactor times join_limit ahead
// of its pace, or its block's) gets 429 and no number: the work prices
// places, it never buys more of them. Any other refusal is answered with
// a fresh challenge, never an error.
func (g *Gate) challenged(w http.ResponseWriter, r *http.Request, vt visit, lim Limits, now time.Time) (visit, error) {
	name, obs := vt.lr.name, g.rooms.obs
	if g.challenges == nil {
		obs.JoinRefused(vt.lr.label(), "challenge")
		vt.refused = AnswerFull
		g.log.Error("room asks for a challenge but the gate has no challenge keys; refusing newcomers")
		return vt, nil
	}
	if h := r.Header.Get(ChallengeHeader); h != "" {
		if placed, err := g.solved(w, r, &vt, h, lim, now); placed || err != nil {
			return vt, err
		}
	}
	d, err := g.decide(r.Context(), name, lim, vt.v, JoinNumber, now)
	if err != nil {
		return vt, err
	}
	switch d.Refusal {
	case RefusedFull:
		vt.refused = AnswerFull
	case RefusedQuota:
		vt.refused, vt.retry = AnswerLimited, d.RetryAfter
		g.limited(name, vt.network)
	}
	if d.Refusal != "" {
		obs.JoinRefused(vt.lr.label(), string(d.Refusal))
		return vt, nil
	}
	room := vt.lr.room()
	bits := room.Challenge.Bits(challenge.Load{Recent: int(min(d.Recent, 1<<30)), Pressure: vt.lr.pressure()})
	// Bound to the unshared network (the /24 or /56 even inside
	// shared_networks): a carrier's NAT may give each connection of one
	// phone another address, and the solution must still be its own.
	prefix := g.challenges.Issue(challenge.Challenge{Room: name, Network: g.unsharedNetwork(r).String(), Number: d.Ticket, Bits: bits,
		Issued: now, Expires: now.Add(room.Challenge.TTL)})
	vt.challenge = &ChallengeAnswer{Prefix: prefix, Bits: bits}
	obs.Challenge(vt.lr.label(), "issued")
	return vt, nil
}

// solved spends the solved challenge h: its solver takes its place at the
// number the challenge carried. placed is false when the challenge buys
// nothing (the metric says why); the caller then issues a fresh one.
func (g *Gate) solved(w http.ResponseWriter, r *http.Request, vt *visit, h string, lim Limits, now time.Time) (bool, error) {
	c, err := g.challenges.Check(h, vt.lr.name, g.unsharedNetwork(r).String(), now)
	if err == nil {
		v := vt.v
		v.Ticket, v.Placed, v.Issued, v.Until = c.Number, false, c.Issued, time.Time{}
		v.Challenge, v.ChallengeUntil = c.ID.String(), c.Expires
		d, err := g.decide(r.Context(), vt.lr.name, lim, v, JoinNone, now)
		if err != nil {
			return false, err
		}
		if d.Refusal == "" && d.State != StateNone {
			g.rooms.obs.Challenge(vt.lr.label(), challenge.Result(nil))
			vt.v, vt.d = v, d
			g.noteAdmission(vt.lr, *vt, d, now)
			vt.raw, vt.fresh = g.reissue(w, vt.lr.name, v, vt.p, d, now)
			return true, nil
		}
		err = challenge.ErrSpent // or past its end by the store's clock
	}
	g.rooms.obs.Challenge(vt.lr.label(), challenge.Result(err))
	return false, nil
}
