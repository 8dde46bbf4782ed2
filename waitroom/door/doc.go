// Package door holds what the gateway's front door (cmd/waitroom) and the
// Go middleware (waitroom/middleware) share, so that the two doors into a
// room cannot drift apart: the assembly of a room with its page
// (BuildRoom), the decision of what a request is (Router.Route), and the
// handler of waitroom's own paths under /.waitroom/ (Endpoints).
//
// It sits above proxy, waitroom and web, which it puts together, and below
// the programs that mount it; proxy, waitroom and web never import it.
package door
