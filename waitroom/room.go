package waitroom

import (
	"fmt"
	"time"

	"github.com/waitroom/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/waitroom/conf"
	"github.com/waitroom/waitroom/waitroom/pattern"
)

// RoomConfig is one entry of the `rooms:` section, as written in YAML.
// Durations and rates are strings with units so that "90" is refused rather
// than read as 90 nanoseconds.
type RoomConfig struct {
	// MaxActive is the number of sessions inside at once. Default 100; 0
	// admits nobody.
	MaxActive int `mapstructure:"max_active" yaml:"max_active" json:"max_active"`
	// AdmitRate is how many new visitors go in per period, "300/m". Default
	// "unlimited": only MaxActive applies.
	AdmitRate string `mapstructure:"admit_rate" yaml:"admit_rate" json:"admit_rate"`
	// AdmitBurst is the token bucket's size. Default 0: one second's worth of
	// AdmitRate, at least 1.
	AdmitBurst int `mapstructure:"admit_burst" yaml:"admit_burst" json:"admit_burst"`
	// SessionTTL is how long a session lasts after the visitor's last request.
	// Default "10m".
	SessionTTL string `mapstructure:"session_ttl" yaml:"session_ttl" json:"session_ttl"`
	// AbandonAfter drops a waiting visitor who has not polled for this long.
	// Default "2m"; must be at least twice the page's refresh interval.
	AbandonAfter string `mapstructure:"abandon_after" yaml:"abandon_after" json:"abandon_after"`
	// RecoveryGrace is how long, after the store shows it lost its data (a
	// ticket older than its data comes back), only returning ticket holders
	// are let in. Default "": the same as AbandonAfter; "0s" disables it.
	RecoveryGrace string `mapstructure:"recovery_grace" yaml:"recovery_grace" json:"recovery_grace"`
	// Tick is how often the admitter moves the line. Default "1s".
	Tick string `mapstructure:"tick" yaml:"tick" json:"tick"`
	// StatusCode is the HTTP status of a waiting answer: 200 (default), 202 or 429.
	StatusCode int `mapstructure:"status_code" yaml:"status_code" json:"status_code"`
	// Mode is "fifo" (default), "random", "passthrough", "reject" or
	// "paused"; the admin API can change it at run time.
	Mode string `mapstructure:"mode" yaml:"mode" json:"mode"`
	// Join is how a newcomer takes its number and its place: "decide"
	// (default: a store script on the first request and another when the
	// ticket comes back) or "batched" (numbers from a block the instance
	// reserved, places written once a tick for all; waitroom/joinbatch.go).
	Join string `mapstructure:"join" yaml:"join" json:"join"`
	// Schedule opens and closes a sale at fixed times; default none.
	Schedule ScheduleConfig `mapstructure:"schedule" yaml:"schedule" json:"schedule"`

	// JoinLimit is how many places one client network (server.client_network)
	// may take, counted when a ticket comes back or a challenge is solved
	// (first requests that never return count nothing): that many at once,
	// then evenly over the period, "300/m". Past it its places and its
	// newcomers get 429 with Retry-After; with Challenge on, the work
	// grows with the network's places, which may run twice this ahead. Default "300/m", which a PC-bang of a hundred
	// seats joining at 9:00 with two tabs each stays under; "unlimited"
	// turns it off.
	JoinLimit string `mapstructure:"join_limit" yaml:"join_limit" json:"join_limit"`
	// MaxWaiting bounds the line; past it newcomers get 503 "full" and no
	// ticket. Default 0: unbounded.
	MaxWaiting int `mapstructure:"max_waiting" yaml:"max_waiting" json:"max_waiting"`
	// Challenge is "off" (default) or "pow": a newcomer solves a proof of
	// work before its ticket is issued (docs/challenge.md).
	Challenge string `mapstructure:"challenge" yaml:"challenge" json:"challenge"`
	// ChallengeBits is the work everyone pays, 2^bits hashes expected:
	// default 14, about half a second on a phone. ChallengeMaxBits caps
	// it: default 24. ChallengeFree is how many tickets a network may take
	// ahead of its join_limit pace before each costs it more: one more bit
	// per doubling. Default 30, a PC-bang at a sale.
	ChallengeBits    int `mapstructure:"challenge_bits" yaml:"challenge_bits" json:"challenge_bits"`
	ChallengeMaxBits int `mapstructure:"challenge_max_bits" yaml:"challenge_max_bits" json:"challenge_max_bits"`
	ChallengeFree    int `mapstructure:"challenge_free" yaml:"challenge_free" json:"challenge_free"`
	// ChallengeTTL is how long a challenge may be solved: default "5m",
	// from "30s" to "1h". Solved within the placement window it keeps the
	// number it carried, later a place at the back.
	ChallengeTTL string `mapstructure:"challenge_ttl" yaml:"challenge_ttl" json:"challenge_ttl"`
	// SessionClients is how many clients (addresses: an IPv4 address, an
	// IPv6 /64) may use one admitted session at once. A client counts
	// until it has been quiet for abandon_after capped at 20s (at least
	// 5s, and at least 3× store.session_cache), so a phone
	// whose carrier moves it to another address leaves the old one
	// behind; a further client is refused (409 "shared", its ticket kept,
	// Retry-After when the quietest may have gone), and those already on
	// it never are. Default 2 (a phone moving from Wi-Fi to LTE is two for
	// a while); 0 turns it off.
	SessionClients int `mapstructure:"session_clients" yaml:"session_clients" json:"session_clients"`
	// SessionMax caps a session's time inside from its first use, renewals
	// included (a checkout window); past it the visitor starts over as a
	// newcomer. Default "1h"; "0s" turns it off.
	SessionMax string `mapstructure:"session_max" yaml:"session_max" json:"session_max"`
	// Identity keys places and sessions on the site's signed accounts.
	// Default off.
	Identity IdentityConfig `mapstructure:"identity" yaml:"identity" json:"identity"`
	// MaxSockets is how many upgraded connections (WebSockets) one
	// admitted session may hold open at once, across all instances; each
	// is closed within a tick of its session's end. Default 8; 0: no cap.
	MaxSockets int `mapstructure:"max_sockets" yaml:"max_sockets" json:"max_sockets"`
	// MaxRooms and IdleAfter apply to a room template (a name holding a
	// parameter, "event-{id}"): at most MaxRooms rooms filled from it are
	// in use at once, across all instances (default 1000), and one that is
	// empty and unvisited for IdleAfter is forgotten, its store keys
	// expiring too (default "1h").
	MaxRooms  int    `mapstructure:"max_rooms" yaml:"max_rooms" json:"max_rooms"`
	IdleAfter string `mapstructure:"idle_after" yaml:"idle_after" json:"idle_after"`
	// CreateLimit applies to a room template: how many of its rooms one
	// client network may make on an instance that does not serve them
	// yet, counted in the store across instances, "10/m". A room made
	// counts toward MaxRooms only once a visitor comes back to it with
	// its ticket. Default "10/m"; "unlimited" turns it off.
	CreateLimit string `mapstructure:"create_limit" yaml:"create_limit" json:"create_limit"`
	// Allow applies to a room template: the only rooms it fills, by the
	// names it fills them as ("event-1001"); a request for any other is
	// answered 404 and makes no room, spends no create_limit and takes no
	// ticket. Each must be a name the template fills; changed by a reload
	// (or through the admin API for a template defined there). Default
	// none: any name the template matches.
	Allow []string `mapstructure:"allow" yaml:"allow" json:"allow"`
	// PreflightLimit is how many CORS preflights one client network may
	// send to the room's paths, "60/m"; past it they are answered from a
	// short cache of the site's own answers, else 429. Default "60/m";
	// "unlimited" turns it off.
	PreflightLimit string `mapstructure:"preflight_limit" yaml:"preflight_limit" json:"preflight_limit"`
	// Autopilot moves the room's limit between autopilot.min_active and
	// max_active from the site's measured latency and errors
	// (docs/autopilot.md). Off when absent.
	Autopilot AutopilotConfig `mapstructure:"autopilot" yaml:"autopilot" json:"autopilot"`
}

// DefaultRoom returns the defaults every room starts from.
func DefaultRoom() RoomConfig {
	return RoomConfig{
		MaxActive:    100,
		AdmitRate:    Unlimited,
		SessionTTL:   "10m",
		AbandonAfter: "2m",
		Tick:         "1s",
		StatusCode:   200,
		Mode:         string(ModeFIFO),
		Join:         JoinDecide,

		JoinLimit:        "300/m",
		Challenge:        ChallengeOff,
		ChallengeBits:    challenge.DefaultPolicy().Base,
		ChallengeMaxBits: challenge.DefaultPolicy().Max,
		ChallengeFree:    challenge.DefaultPolicy().Free,
		ChallengeTTL:     challenge.DefaultPolicy().TTL.String(),
		SessionClients:   2,
		SessionMax:       "1h",
		MaxSockets:       8,
		PreflightLimit:   "60/m",
		MaxRooms:         1000,
		IdleAfter:        "1h",
		CreateLimit:      "10/m",
	}
}

// How a room's newcomers join (RoomConfig.Join).
const (
	JoinDecide  = "decide"
	JoinBatched = "batched"
)

// The challenges a room may ask of newcomers.
const (
	ChallengeOff = "off"
	ChallengePoW = "pow"
)

// Room is a validated room, ready to use.
type Room struct {
	Name       string
	Limits     Limits
	Tick       time.Duration
	StatusCode int
	Mode       Mode
	Schedule   Schedule
	// JoinBatched is RoomConfig.Join "batched".
	JoinBatched bool
	// Refresh is how often a waiting visitor asks again, and Title the
	// room's display name; these four come from the room's page section,
	// which the web package owns, copied in by door.BuildRoom only.
	Refresh    time.Duration
	RefreshMax time.Duration // the longest poll interval far back in line
	Title      string
	Message    string // the notice on the waiting page (page.message)
	// Challenge says what proof of work newcomers must do first (nil:
	// none); Identity checks the site's signed accounts (nil: off).
	Challenge *challenge.Policy
	Identity  *Identity
	// PreflightLimit bounds each client network's CORS preflights.
	PreflightLimit Rate
	// Template is, for a room filled in from a template, the template's
	// name ("event-{id}"), and Params the values that filled it; for a
	// template itself, its own name. "" for a plain room.
	Template string
	Params   []Param
	// MaxRooms, IdleAfter and CreateLimit bound a template's rooms
	// (RoomConfig).
	MaxRooms    int
	IdleAfter   time.Duration
	CreateLimit Rate
	// Allowed, for a template with an allow list, holds the names it
	// fills; nil lets it fill any name it matches (see Allows).
	Allowed map[string]struct{}
	// Source says where the room comes from (SourceFile, SourceAPI,
	// SourceTemplate), for the admin API.
	Source string
	// Autopilot moves the limit from the site's health; nil: off.
	Autopilot *Autopilot
	// Closing marks a room being deleted (DELETE of an API room): it is
	// closed (ModeReject) whatever its mode or an override says, so the
	// people inside finish their sessions and nobody else goes in, until
	// its sessions end and its routes go.
	Closing bool
}

// Where a room comes from.
const (
	SourceFile     = "yaml"     // the configuration file
	SourceAPI      = "api"      // the admin API, kept in the store
	SourceTemplate = "template" // filled in from a room template
)

// Param is a path parameter that filled a room template.
type Param = pattern.Param

// Build parses and checks the config into the room called name; the error
// lists every problem, keys relative to the room.
func (c RoomConfig) Build(name string) (Room, error) {
	var p conf.Problems
	r := Room{Name: name, StatusCode: c.StatusCode}
	if c.MaxActive < 0 {
		p.Add("max_active", "must be >= 0, got %d", c.MaxActive)
	}
	r.Limits.MaxActive = c.MaxActive
	rate, err := ParseRate(c.AdmitRate)
	if err != nil {
		p.Add("admit_rate", "%v", err)
	}
	r.Limits.AdmitRate = rate
	switch {
	case c.AdmitBurst < 0:
		p.Add("admit_burst", "must be >= 0 (0 means one second's worth of admit_rate), got %d", c.AdmitBurst)
	case c.AdmitBurst > maxRateN:
		p.Add("admit_burst", "must be <= %d, got %d", maxRateN, c.AdmitBurst)
	case c.AdmitBurst == 0:
		r.Limits.AdmitBurst = rate.DefaultBurst()
	default:
		r.Limits.AdmitBurst = c.AdmitBurst
	}
	r.Limits.SessionTTL = p.Duration("session_ttl", c.SessionTTL, time.Millisecond)
	r.Limits.AbandonAfter = p.Duration("abandon_after", c.AbandonAfter, time.Millisecond)
	r.Tick = p.Duration("tick", c.Tick, time.Millisecond)
	r.Limits.RecoveryGrace = r.Limits.AbandonAfter
	if c.RecoveryGrace != "" {
		r.Limits.RecoveryGrace = p.Duration("recovery_grace", c.RecoveryGrace, 0)
	}
	sched, err := c.Schedule.Build()
	p.Nest("schedule.", err)
	r.Schedule = sched
	if m, err := ParseMode(c.Mode); err != nil {
		p.Add("mode", "%v", err)
	} else {
		r.Mode = m
	}
	switch c.Join {
	case "", JoinDecide:
	case JoinBatched:
		r.JoinBatched = true
	default:
		p.Add("join", "must be %q or %q, got %q", JoinDecide, JoinBatched, c.Join)
	}
	switch c.StatusCode {
	case 200, 202, 429:
	default:
		p.Add("status_code", "must be 200, 202 or 429, got %d", c.StatusCode)
	}
	c.buildGuards(&p, &r)
	ap, err := c.Autopilot.Build(c.MaxActive)
	p.Nest("autopilot.", err)
	r.Autopilot = ap
	if ap != nil && r.Limits.SessionMax > 0 && ap.Warmup >= r.Limits.SessionMax {
		// A session's first warmup goes untimed and session_max ends it:
		// no request would ever be timed, and the limit never rise.
		p.Add("autopilot.warmup", "must be shorter than session_max (%s), got %s", conf.Short(r.Limits.SessionMax), conf.Short(ap.Warmup))
	}
	if pattern.IsTemplate(name) {
		r.Template = name
		if c.MaxRooms < 1 || c.MaxRooms > maxTemplateRooms {
			p.Add("max_rooms", "must be from 1 to %d, got %d", maxTemplateRooms, c.MaxRooms)
		}
		r.MaxRooms = c.MaxRooms
		r.IdleAfter = p.Duration("idle_after", c.IdleAfter, time.Second)
		if r.IdleAfter > 0 && r.IdleAfter < r.Tick {
			p.Add("idle_after", "must be at least the tick (%s), got %q", c.Tick, c.IdleAfter)
		}
		create, err := ParseRate(c.CreateLimit)
		if err != nil {
			p.Add("create_limit", "%v", err)
		}
		r.CreateLimit = create
		r.Allowed = buildAllow(&p, name, c.Allow)
	} else if len(c.Allow) > 0 {
		p.Add("allow", "applies to a room template (a name holding a parameter, such as \"event-{id}\") only")
	}
	return r, p.Err()
}

// Allows reports whether the template r fills a room called name: its
// allow list names it, or it has none.
func (r *Room) Allows(name string) bool {
	if r.Allowed == nil {
		return true
	}
	_, ok := r.Allowed[name]
	return ok
}

// buildAllow checks a template's allow list: each a name the template
// fills, at most maxAllowed. nil for none.
func buildAllow(p *conf.Problems, template string, names []string) map[string]struct{} {
	if len(names) == 0 {
		return nil
	}
	if len(names) > maxAllowed {
		p.Add("allow", "must list at most %d rooms, got %d", maxAllowed, len(names))
		return nil
	}
	pt, err := pattern.ParseTemplate(template)
	if err != nil {
		return nil // the name's own problem is reported where rooms are named
	}
	set := make(map[string]struct{}, len(names))
	for i, n := range names {
		if !pt.Matches(n) {
			p.Add(fmt.Sprintf("allow[%d]", i), "%q is not a room %q fills", n, template)
			continue
		}
		set[n] = struct{}{}
	}
	return set
}

// maxAllowed bounds a template's allow list.
const maxAllowed = 1_000_000

// maxTemplateRooms bounds one template's rooms: each runs its own ticks.
const maxTemplateRooms = 100000

// buildGuards reads what stands between a newcomer and a place: the
// network quota, the bounded line, the challenge, the identity, and what
// bounds one admitted session.
func (c RoomConfig) buildGuards(p *conf.Problems, r *Room) {
	quota, err := ParseRate(c.JoinLimit)
	if err != nil {
		p.Add("join_limit", "%v", err)
	}
	r.Limits.JoinLimit = quota
	if c.MaxWaiting < 0 {
		p.Add("max_waiting", "must be >= 0 (0: unbounded), got %d", c.MaxWaiting)
	}
	r.Limits.MaxWaiting = int64(c.MaxWaiting)
	switch c.Challenge {
	case ChallengeOff:
	case ChallengePoW:
		policy := challenge.DefaultPolicy()
		policy.Base, policy.Max, policy.Free = c.ChallengeBits, c.ChallengeMaxBits, c.ChallengeFree
		policy.TTL = p.Duration("challenge_ttl", c.ChallengeTTL, time.Second)
		p.Nest("", policy.Validate())
		if quota.IsUnlimited() {
			p.Add("challenge", "needs a join_limit: the work grows with a network's tickets ahead of its pace, got join_limit %q", c.JoinLimit)
		}
		r.Challenge = &policy
	default:
		p.Add("challenge", "must be %q or %q, got %q", ChallengeOff, ChallengePoW, c.Challenge)
	}
	if c.SessionClients < 0 || c.SessionClients > maxSessionClients {
		p.Add("session_clients", "must be from 0 (off) to %d, got %d", maxSessionClients, c.SessionClients)
	}
	r.Limits.SessionClients = c.SessionClients
	if d, err := conf.ParseDuration(c.SessionMax); c.SessionMax != "" && (err != nil || d != 0) {
		r.Limits.SessionMax = p.Duration("session_max", c.SessionMax, time.Second) // "0s" is off
	}
	id, err := c.Identity.Build()
	p.Nest("identity.", err)
	r.Identity = id
	if c.MaxSockets < 0 || c.MaxSockets > maxSockets {
		p.Add("max_sockets", "must be from 0 (no cap) to %d, got %d", maxSockets, c.MaxSockets)
	}
	r.Limits.MaxSockets = c.MaxSockets
	pre, err := ParseRate(c.PreflightLimit)
	if err != nil {
		p.Add("preflight_limit", "%v", err)
	}
	r.PreflightLimit = pre
}

// maxSockets bounds the sockets a store keeps per session.
const maxSockets = 1024

// maxSessionClients bounds the clients a store keeps per session.
const maxSessionClients = 64

// PlaceWithin is the placement window of a room whose page asks again
// every refresh (Limits.PlaceWithin): a ticket's holder brings it back at
// its page's first poll, which the first answer asks for after refresh, so
// six of those (at least 10s) leave room for a slow phone or a reload, and
// never more than abandon_after, after which its place would be dropped
// anyway. The shorter the window, the sooner a ticket that never came back
// stops counting in the places behind it.
func PlaceWithin(abandonAfter, refresh time.Duration) time.Duration {
	w := max(6*refresh, 10*time.Second)
	if abandonAfter > 0 {
		w = min(w, abandonAfter)
	}
	return w
}
