// Package waitroom holds the admission model of the waiting room: the Store
// that keeps the line, the Rooms that run on it, the Gate that puts each
// request in front of a room's line, and the visitor's Ticket.
//
// # The admission model
//
// A room has two limits. MaxActive bounds the sessions inside at once;
// AdmitRate (a token bucket of AdmitBurst tokens) bounds how fast new visitors
// go in. A new visitor who finds nobody waiting, a free slot and a token goes
// straight in; everyone else takes the next ticket number and waits. Every tick
// an Admitter asks the Store to move visitors from the head of the line into
// the active set while both limits allow. Visitors who stopped polling for
// longer than AbandonAfter are skipped and dropped, never admitted. An active
// session slides forward on each request and ends when it expires, when the
// visitor leaves, or when the upstream answers "Waitroom-Command: release".
// A room's Mode (fifo, random, passthrough, reject, paused) and an operator's
// runtime Override reshape the limits a store is asked with (Override.Apply),
// so a store knows nothing of modes.
//
// Ticket numbers are seeded from the store's clock, in microseconds since the
// Unix epoch, when a room's counter is created, and grow by one per join, so
// they keep growing even if the store loses its data (every store uses this
// unit, so tickets mean the same whichever store issued them). A visitor who
// comes back with a ticket older than the counter's seed held a place in an
// earlier incarnation of the store and is put back at that place, once; a
// ticket from the current incarnation that the store no longer knows was
// abandoned, released or expired, and its holder joins at the back.
//
// # The store contract
//
// store.go holds the whole of it: Store, the embedding of one interface
// per concern (Line: Decide on every request the gate cannot answer alone,
// Touch and Admit on every tick, AdmitN, Shuffle, Release and Stats;
// Overrides: an operator's runtime changes; Guards: sockets, allowances
// and template use; DefinitionStore: rooms made through the API) with Ping
// and Close; the values they take and return (a room's Limits in
// limits.go); the sentinel errors; and As,
// which finds what only some stores offer (a webhook claimer, a
// certificate cache) through wrappers. Every method is atomic, so any
// number of gateways that share a store keep one line. memstore keeps it
// in process; redisstore in Redis, one Lua script per change; storetest
// holds both to it.
//
// A store may lose data: all of a room's (Redis restarted empty) or its
// last writes (a failover to a replica that lagged). Tickets carry their
// numbers, so the store rebuilds from them: a ticket older than the
// store's data, or one up to the counter a repair set whose place or
// session is gone, gets its place back by number, or its session while a
// slot is free, once per visitor (Decide). The gate helps the store see
// the loss (repair.go): every request tells it the highest ticket the
// instance saw lately (Visitor.Known; ticks count the room's incarnation
// as one), so a counter behind the tickets is moved past them and a room
// whose data is gone starts its recovery grace before anyone is let in;
// a decision or tick that shows a loss empties the room's session cache;
// releases the store took in the last 30 seconds are applied again after
// a repair, and those it could not take (no master) are kept and retried
// each tick. redisstore's doc, "Repairs", says what the store does and
// how long the window before detection is.
//
// # The request path, by file
//
// A visitor's request crosses these, in order:
//
//	proxy/connlimit.go         ConnLimit: connections per client network (opt-in)
//	cmd/waitroom/frontdoor.go  withScope: the request's Scope (scope.go), before the access log
//	cmd/waitroom/access.go     the access log: one line from the Scope once the answer is sent
//	proxy/deadline.go          Deadlines: the body, the response, an upgraded socket's silence
//	cmd/waitroom/frontdoor.go  frontDoor: strips Waitroom-Visitor/-Room, puts the client's
//	                           address in the Scope, then acts on the route decision
//	waitroom/door/route.go     Router.Route: the one decision, a door.Kind (endpoint, bad
//	                           path, refused, no route, no room, bypass, room), shared by
//	                           the front door, the auth endpoint and the middleware
//	proxy/path.go              CleanPath: the one spelling that is matched and forwarded
//	proxy/router.go            Router.Match: host, then the longest path prefix
//	proxy/bypass.go            Bypass.Match: static paths, allowed networks, a secret header
//	waitroom/gate.go           Gate.Serve (ServeFilled, Check): open the room, then serve:
//	                           decide (decideRequest), Record the Outcome, answer (hold, admit)
//	waitroom/preflight.go      a CORS preflight: to the site, bounded per network
//	waitroom/ticket.go         Tickets.Read: the room's cookie or Waitroom-Token
//	waitroom/cookiename.go     the cookie's __Host- name, the old name read once and moved
//	waitroom/create.go         Gate.create: a template's room made for a newcomer's ticket,
//	                           within create_limit; counted at its first returning ticket
//	waitroom/template.go       Rooms.Fill: a room filled in from a route's parameter
//	waitroom/visit.go          visit: the guards, the store's decision, a fresh ticket when
//	                           it changed, the answer's words (position, wait, when to ask again)
//	waitroom/anchored.go       fromAnchor: a poll far back in line answered from its ticket's
//	                           anchor and the tick's view, its mark sent with the tick (Touch)
//	waitroom/store.go          Store.Decide: one atomic call
//	waitroom/scope.go          Record: the Outcome (outcome.go) to the metrics and the Scope, once
//	web/responder.go           the answer as the waiting page, JSON or a refusal
//	web/fastpage.go            the built-in page from a plan: chunks and escaped values
//	waitroom/socket.go         an admitted WebSocket: counted, held, closed with its session
//	proxy/upstream.go          Upstream: the admitted request to the site, release by
//	                           Waitroom-Command (cmd/waitroom/generation.go: command)
//
// Beside the request path: waitroom/door/endpoints.go (Endpoints: everything
// under /.waitroom/, for both doors), waitroom/endpoints.go (the gate's
// /.waitroom/status, /leave and /enter), waitroom/preview.go (a preview
// link's page: sealed by the admin API, shown without the store), cmd/waitroom/auth.go
// (/.waitroom/auth, the decision without the proxy, for nginx through
// Gate.Check, Traefik and Envoy), waitroom/middleware (the same doors
// in front of one http.Handler), web/assets.go (/.waitroom/static/, the
// page's style and scripts by hash), web/client.go (/.waitroom/client.js for
// SPAs), waitroom/rooms.go (Rooms: each room's live state, which outlives
// reloads; the operators' actions, Release among them, are in operate.go),
// waitroom/admitter.go (Rooms.Run: a ticker per room; sleep.go: an empty
// filled room skips the store until a request wakes it), waitroom/live.go (a
// room's limits in effect, stats and history), waitroom/door/room.go
// (BuildRoom: a room with its page, checked against each other, for the
// gateway and the middleware), cmd/waitroom/build.go (a configuration built
// once) and reload.go (a new generation swapped in whole).
//
// # Where a new guard goes
//
// A check on who may take or hold a place (a quota, a challenge, an
// identity) belongs in visit.go, between the ticket and the store: visit
// or settle sets visit.refused (an AnswerState) and the refusal reaches
// the visitor through the one answer path, Outcome refused. A check on the
// request itself, before any room (a path, a header), belongs in
// door/route.go as a Kind, so every door applies it: the three switches
// on it (cmd/waitroom/frontdoor.go, auth.go, middleware.go) refuse a kind
// they do not list. A new Outcome is a
// constant in outcome.go and, if the metrics should count it apart, a word
// in waitroom/metrics (decisionOf).
package waitroom
