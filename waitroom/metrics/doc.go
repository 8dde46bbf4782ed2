// Package metrics exposes the gateway's Prometheus metrics: what the gate
// decided, how the line moved, how the upstreams and the store answered, and
// how configuration reloads went. The admin listener serves them at /metrics
// through Metrics.Handler.
//
// Metrics has its own registry, not the client library's global one, so two
// gateways in one test binary (or one process) never collide, and nothing an
// imported library registers globally leaks into the page.
//
// Every counter counts what this instance did, so a sum over instances is the
// total for the site. The queue gauges are the exception: they are the store's
// snapshot of the room, which every instance shares, so aggregate them with
// max or avg, not sum. They are set from the stats the admitter reads every
// tick (Room), never read from the store per scrape: a scrape costs the store
// nothing however many rooms or scrapers there are.
//
// The series:
//
//	waitroom_requests_total{room,decision}            counter   decision: admitted, queued, bypass, refused, preflight, error
//	waitroom_ticket_rejections_total{reason}          counter   reason: invalid, expired, other
//	waitroom_upstream_duration_seconds{upstream,class} histogram class: 1xx..5xx, error
//	waitroom_store_duration_seconds{op,result}        histogram result: ok, error, canceled
//	waitroom_admissions_total{room}                   counter   by a tick, by AdmitN, or at once
//	waitroom_abandonments_total{room}                 counter   dropped from the line for not polling
//	waitroom_expiries_total{room}                     counter   sessions that ran out
//	waitroom_releases_total{room,how}                 counter   how: upstream, leave, admin
//	waitroom_queue_length{room}                       gauge     visitors in line
//	waitroom_active_sessions{room}                    gauge     sessions inside
//	waitroom_admitted_last_minute{room}               gauge     admissions in the last 60s
//	waitroom_joins_refused_total{room,reason}         counter   reason: quota, full, challenge, identity
//	waitroom_session_refusals_total{room,reason}      counter   reason: shared, session_max
//	waitroom_challenges_total{room,result}            counter   result: issued, ok, malformed, bad_mac, wrong_room,
//	                                                            wrong_network, expired, not_enough_work, spent
//	waitroom_restores_total{room,kind}                counter   kind: waiting, inside (after a data loss or a failover),
//	                                                            release (a release a failover lost, applied again)
//	waitroom_template_rooms{room}                     gauge     rooms a template fills on this instance
//	waitroom_wait_seconds{room}                       histogram from a ticket's issue to its admission (0: in at once)
//	waitroom_session_seconds{room}                    histogram time inside of sessions a release ended
//	waitroom_autopilot_limit{room}                    gauge     the autopilot's limit in effect (rooms with one)
//	waitroom_autopilot_latency_seconds{room}          gauge     the site's latency at its percentile, last step
//	waitroom_autopilot_error_share{room}              gauge     the share of admitted requests that failed, last step
//	waitroom_autopilot_frozen{room}                   gauge     1 while the store is unreachable and the limit held
//	waitroom_arrivals_total{room}                     counter   first requests that got a ticket or went straight in
//	waitroom_page_views_total{room,page}              counter   page: waiting, challenge (HTML pages served)
//	waitroom_access_total{room,type}                  counter   type: browser, app, api (arrivals), challenged, refused
//	waitroom_devices_total{room,class}                counter   class: phone, tablet, desktop, bot, unknown (DeviceClass)
//	waitroom_regions_total{room,country}              counter   country: ISO code, other, unknown (all, without geo.db_file)
//	waitroom_visitors_last_minute{room}               gauge     distinct tickets seen in the last whole minute (HyperLogLog)
//
// A room filled in from a template ("event-123" from "event-{id}") is
// counted under its template's name, so series do not grow with events.
//
//	waitroom_config_reloads_total{result}             counter   result: ok, error, unchanged
//	waitroom_store_outages_total                      counter   times the store went from up to down
//	waitroom_store_failovers_total                    counter   failovers noticed: the store lost its last writes, rooms repaired
//	waitroom_store_up                                 gauge     1 while the store answers
//	waitroom_store_errors_total{kind}                 counter   failed calls by kind (Redis): unreachable, readonly,
//	                                                            masterdown, loading, clusterdown, tryagain, noreplicas,
//	                                                            oom, busy, other
//	waitroom_store_wait_shortfalls_total              counter   WAITs that timed out short of wait_replicas (Redis)
//	waitroom_conns_refused_total                      counter   connections closed for server.max_conns_per_client
//	waitroom_webhooks_total{event,result}             counter   webhook deliveries: sent, retried, dropped, ...
//
// plus the client library's go_* and process_* collectors and the scrape
// handler's own promhttp_* counters.
//
// Declare exports a room's (or template's) series at 0 when the room is put
// in service, DeclareUpstream an upstream's, and New every webhook event and
// result, so a dashboard of a quiet gateway reads 0 rather than "No data".
//
// A routeless request (room "") is labelled room="-", because Prometheus
// treats an empty label as a missing one. Label values the package does not
// know for a closed set (a decision, a release "how", a reload result, a store
// op) are still counted under the value given, on a slower path, so a typo
// shows up in the page instead of vanishing; ticket rejection reasons are the
// exception and fold into "other", as the set is meant to be open-ended there.
//
// Recording is cheap: the series for each room, upstream and closed label set
// are resolved once and kept in a copy-on-write map, so the request path does
// an atomic load, a map lookup and an atomic add, with no lock and no
// allocation. A nil *Metrics records nothing, so a component can take one
// whether or not metrics are enabled.
//
// Store wraps a waitroom.Store so every call is timed into
// waitroom_store_duration_seconds without changing what it returns.
package metrics
