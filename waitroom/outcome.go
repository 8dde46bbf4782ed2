package waitroom

// Outcome is what became of one request: the closed set the metrics
// (Observer.Request) and the access log (Scope.Outcome) both hear, once
// per request, from Record.
type Outcome string

// The outcomes. The gate's come from Gate.serve and the visitor
// endpoints; OutcomeProxied and OutcomeBypass from the front door, which
// sends a request to its upstream without the gate, and the auth
// endpoint, which allows it.
const (
	OutcomeNone      Outcome = "none"      // answered before routing, or no route
	OutcomeProxied   Outcome = "proxied"   // a route without a room
	OutcomeBypass    Outcome = "bypass"    // a room's route a bypass rule let through
	OutcomeAdmitted  Outcome = "admitted"  // inside a session: to the upstream
	OutcomeJoined    Outcome = "joined"    // a newcomer's first answer: its ticket
	OutcomeQueued    Outcome = "queued"    // in line (or before the sale): the waiting answer
	OutcomeRefused   Outcome = "refused"   // turned away: a quota, a full line, a challenge
	OutcomePreflight Outcome = "preflight" // a CORS preflight, which no room holds
	OutcomeHold      Outcome = "hold"      // the store failed; store.on_error decided
	OutcomeError     Outcome = "error"     // the visitor went away before an answer
	OutcomePoll      Outcome = "poll"      // /.waitroom/status
	OutcomeEnter     Outcome = "enter"     // /.waitroom/enter
	OutcomeLeft      Outcome = "left"      // /.waitroom/leave
)
