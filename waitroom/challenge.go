package waitroom

import (
	"net/http"
	"time"

	"github.com/waitroom/waitroom/waitroom/challenge"
)

// ChallengeHeader carries a solved proof of work: "<prefix>:<nonce>".
const ChallengeHeader = "Waitroom-Challenge"

// challenged answers a newcomer of a room with a challenge: a solved one
// spends its challenge and places its solver at the number the challenge
// carried; anyone else takes a number and gets work to do, harder the more
// tickets its network took ahead of its pace and the faster the line grows.
// The number is taken now, so a slow phone loses no place to a fast PC.
// Any refusal is answered with a fresh challenge, never an error.
func (g *Gate) challenged(w http.ResponseWriter, r *http.Request, vt visit, lim Limits, now time.Time) (visit, error) {
	name, obs, network := vt.lr.name, g.rooms.obs, vt.network.String()
	if g.challenges == nil {
		obs.JoinRefused(vt.lr.label(), "challenge")
		vt.refused = AnswerFull
		g.log.Error("room asks for a challenge but the gate has no challenge keys; refusing newcomers")
		return vt, nil
	}
	if h := r.Header.Get(ChallengeHeader); h != "" {
		c, err := g.challenges.Check(h, name, network, now)
		if err == nil {
			v := vt.v
			v.Ticket, v.Placed, v.Issued = c.Number, false, c.Issued
			v.Challenge, v.ChallengeUntil = c.ID.String(), c.Expires
			d, err := g.decide(r.Context(), name, lim, v, JoinNone, now)
			if err != nil {
				return vt, err
			}
			if d.Refusal == "" && d.State != StateNone {
				obs.Challenge(vt.lr.label(), challenge.Result(nil))
				vt.v, vt.d = v, d
				g.noteAdmission(vt.lr, vt, d, now)
				vt.raw, vt.fresh = g.reissue(w, name, v, vt.p, d, now)
				return vt, nil
			}
			err = challenge.ErrSpent // or its number is no longer placeable
		}
		obs.Challenge(vt.lr.label(), challenge.Result(err))
	}
	d, err := g.decide(r.Context(), name, lim, vt.v, JoinNumber, now)
	if err != nil {
		return vt, err
	}
	if d.Refusal == RefusedFull {
		obs.JoinRefused(vt.lr.label(), string(RefusedFull))
		vt.refused = AnswerFull
		return vt, nil
	}
	room := vt.lr.room()
	bits := room.Challenge.Bits(challenge.Load{Recent: int(min(d.Recent, 1<<30)), Pressure: vt.lr.pressure()})
	prefix := g.challenges.Issue(challenge.Challenge{Room: name, Network: network, Number: d.Ticket, Bits: bits,
		Issued: now, Expires: now.Add(lim.PlacementWindow())})
	vt.challenge = &ChallengeAnswer{Prefix: prefix, Bits: bits}
	obs.Challenge(vt.lr.label(), "issued")
	return vt, nil
}
