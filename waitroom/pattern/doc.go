// Package pattern is the one grammar of {param} names: route paths such as
// "/events/{id}/" and room templates such as "event-{id}".
//
// A parameter is written {name}, name a lower-case letter then lower-case
// letters, digits or '_'. In a path (ParsePath) each parameter is a whole
// segment and a name appears once; the path matches a request path as a
// prefix, ASCII case-insensitively. In a template (ParseTemplate) a
// parameter may stand anywhere and repeat; a filled name must match it
// whole. A value is 1 to MaxValueLen bytes of [a-z0-9_-] (ValidValue): a
// request path's segment is taken in lower case, and one that is not a
// value is refused.
//
// The router (proxy) matches paths and fills room names; the rooms
// (waitroom) read a filled name back to its template and values for a
// status poll; the pages (web) fill titles with FillText; and the gateway
// claims its own cookies with a Set. It imports nothing of the project,
// so all of them can agree on it.
package pattern
