// Package challenge is the proof of work a room may ask for before it issues
// a ticket (`rooms.<name>.challenge: pow`). It makes a bot farm pay for every
// place in line while one person pays a fraction of a second.
//
// The gate asks the Policy how many bits this client's network and the line's
// pressure call for, takes a ticket number at once (so the place in line is
// fixed when the challenge is issued, and a slow phone loses nothing to a fast
// PC), and answers with the prefix that Issuer.Issue signs:
//
//	{"state":"challenge","challenge":{"prefix":"AQ…","bits":16}}
//
// The client looks for a nonce such that SHA-256(prefix || nonce) starts with
// at least that many zero bits (Solve, or challenge.js in a browser) and asks
// again with
//
//	Waitroom-Challenge: <prefix>:<nonce>
//
// Issuer.Check verifies the signature, the room, the client's network, the
// expiry and the work, and returns the Challenge the prefix carries. Single use
// is the caller's job: Check is pure, so the gate must mark Challenge.ID spent
// in the store until Challenge.Expires and refuse an ID already spent
// (ErrSpent). Result names each outcome for the metric
// waitroom_challenges_total{room,result}.
//
// The prefix is base64url (RFC 4648 §5, no padding) of a versioned binary
// payload followed by a 128-bit truncated HMAC-SHA256; see format.go. This
// package imports no other package of the project, so the gate, the load
// generator and tests can all use it.
//
// docs/challenge.md describes the protocol for app developers.
package challenge
