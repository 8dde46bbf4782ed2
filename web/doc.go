// Package web renders what a waiting visitor sees: the waiting room page, its
// JSON twin for scripts and apps, and the branded error pages the proxy shows
// when the site is down or a request is refused. It also serves the
// operators' side on the admin listener: the JSON API (admin.go, adminapi.go:
// rooms, their stats and history, runtime overrides, "admit N", releases),
// behind a bearer token compared in constant time, and the live dashboard
// (dashboard.go), whose page holds no data and calls the API with the token.
// Every read and change of the API goes through waitroom.Rooms.
//
// Pages is built once by New from templates and assets embedded in the
// binary, so a running waitroom never reads the disk to answer a visitor, and
// is shared by every request. Each answer is rendered into a pooled buffer and
// sent in one write with Content-Length.
//
// The waiting page works without JavaScript: a <noscript> meta refresh
// reloads it every Refresh seconds, and each reload counts as the poll that
// keeps the visitor's place. With JavaScript, an inline script polls the
// status URL for JSON instead, updates the numbers in place, backs off when
// the network fails and moves on with location.replace once the visitor is
// admitted, to a same-site path only.
//
// Every answer is personal and short-lived, so every answer carries
// Cache-Control: no-store. The style and script are inline and allowed by
// their SHA-256 hashes in a Content-Security-Policy that otherwise allows
// nothing: the page loads no fonts, images or scripts from anywhere, which
// keeps it working when the site behind it is the thing that is overloaded.
// Templates use html/template, so everything the caller passes in, the room
// title included, is escaped for where it lands. The visitor's token is sent
// only in JSON; the HTML page never contains it.
//
// Strings exist in English and Korean. The room's PageConfig.Locale is the
// default; a browser whose Accept-Language prefers the other language gets
// that one (see Locale). Content negotiation between HTML and JSON follows
// the Accept header (see WantsJSON).
package web
