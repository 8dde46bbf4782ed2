package waitroom

import (
	"errors"
	"net/http"
	"time"
)

// ChallengeHeader carries a solved proof of work: "<prefix>:<nonce>".
const ChallengeHeader = "Waitroom-Challenge"

// Challenger issues and checks the proofs of work of rooms with challenge:
// pow. Package challenge does the work; the application adapts it.
type Challenger interface {
	// Issue returns the prefix of a challenge that gives its solver ticket
	// in room, bound to network, asking bits of work, valid until expires.
	Issue(room, network string, ticket int64, bits int, issued, expires time.Time) string
	// Check verifies a ChallengeHeader value sent from network for room
	// and returns what its challenge carried.
	Check(header, room, network string, now time.Time) (SolvedChallenge, error)
	// Bits is the work to ask of a network that took recent tickets lately,
	// while waiting people are in line: a person pays little, a farm much.
	Bits(recent, waiting int64) int
	// Result names a Check outcome for the metrics ("ok" for nil).
	Result(err error) string
}

// SolvedChallenge is what a solved challenge carried.
type SolvedChallenge struct {
	ID      string // single use: the store spends it
	Ticket  int64  // the number taken when it was issued: its solver's place
	Issued  time.Time
	Expires time.Time
}

// errChallengeSpent names a challenge presented a second time.
var errChallengeSpent = errors.New("challenge already used")

// errNoChallenger names a room that asks for challenges on a gate built
// without a Challenger; its newcomers are refused rather than let through.
var errNoChallenger = errors.New("no challenger configured")

// challenged answers a newcomer of a room with a challenge: a solved one
// spends its challenge and places its solver at the number the challenge
// carried; anyone else takes a number and gets work to do, harder the more
// tickets its network took lately. The number is taken now, so a slow
// phone loses no place to a fast PC.
func (g *Gate) challenged(w http.ResponseWriter, r *http.Request, vt visit, lim Limits, now time.Time) (visit, error) {
	name, obs, network := vt.lr.name, g.rooms.obs, vt.network.String()
	if g.challenges == nil {
		obs.JoinRefused(name, "challenge")
		vt.refused = AnswerFull
		g.log.Error("room asks for a challenge but the gate has no challenger; refusing newcomers")
		return vt, nil
	}
	if h := r.Header.Get(ChallengeHeader); h != "" {
		c, err := g.challenges.Check(h, name, network, now)
		if err == nil {
			v := vt.v
			v.Ticket, v.Placed, v.Issued = c.Ticket, false, c.Issued
			v.Challenge, v.ChallengeUntil = c.ID, c.Expires
			d, err := g.decide(r.Context(), name, lim, v, JoinNone, now)
			if err != nil {
				return vt, err
			}
			if d.Refusal == "" && d.State != StateNone {
				obs.Challenge(name, g.challenges.Result(nil))
				vt.v, vt.d = v, d
				vt.raw, vt.fresh = g.reissue(w, name, v, vt.p, d, now)
				return vt, nil
			}
			err = errChallengeSpent
		}
		obs.Challenge(name, g.challenges.Result(err))
	}
	d, err := g.decide(r.Context(), name, lim, vt.v, JoinNumber, now)
	if err != nil {
		return vt, err
	}
	if d.Refusal == RefusedFull {
		obs.JoinRefused(name, string(RefusedFull))
		vt.refused = AnswerFull
		return vt, nil
	}
	bits := g.challenges.Bits(d.Recent, vt.lr.stats.Load().Waiting)
	expires := now.Add(challengeLife(lim))
	vt.challenge = &ChallengeAnswer{Prefix: g.challenges.Issue(name, network, d.Ticket, bits, now, expires), Bits: bits}
	obs.Challenge(name, "issued")
	return vt, nil
}

// challengeLife is how long a challenge may take: as long as a ticket may
// wait to be brought back, since solving it is what brings it back.
func challengeLife(lim Limits) time.Duration {
	if lim.AbandonAfter > 0 {
		return lim.AbandonAfter
	}
	return 2 * time.Minute
}
