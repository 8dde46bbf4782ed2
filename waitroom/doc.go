// Package waitroom holds the admission model of the waiting room: the Store
// that keeps the line, the Gate that puts each request in front of it, the
// Admitter that moves the line along, and the visitor Ticket.
//
// A room has two limits. MaxActive bounds the sessions inside at once;
// AdmitRate (a token bucket of AdmitBurst tokens) bounds how fast new visitors
// go in. A new visitor who finds nobody waiting, a free slot and a token goes
// straight in; everyone else takes the next ticket number and waits. Every tick
// the Admitter asks the Store to move visitors from the head of the line into
// the active set while both limits allow. Visitors who stopped polling for
// longer than AbandonAfter are skipped and dropped, never admitted. An active
// session slides forward on each request and ends when it expires, when the
// visitor leaves, or when the upstream answers "Waitroom-Command: release".
//
// Ticket numbers are seeded from the store's clock, in microseconds since the
// Unix epoch, when a room's counter is created, and grow by one per join, so
// they keep growing even if the store loses its data (every store uses this
// unit, so tickets mean the same whichever store issued them). A visitor who
// comes back with a ticket older than the counter's seed held a place in an
// earlier incarnation of the store and is put back at that place, once; a
// ticket from the current incarnation that the store no longer knows was
// abandoned, released or expired, and its holder joins at the back.
package waitroom
