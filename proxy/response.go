package proxy

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"sync"
)

// modifyResponse takes the Waitroom-Command header off the response before
// ReverseProxy copies the headers to the browser, and arranges for the same
// to happen to a trailer of that name once the body has been read.
func (u *Upstream) modifyResponse(res *http.Response) error {
	answered(res)
	c := &command{u: u, res: res}
	c.take(res.Header)
	// The pass travels toward the site only: a site that echoes request
	// headers (a debug page, a framework's error page) must not hand the
	// visitor a bearer credential for its own back door.
	res.Header.Del(PassHeader)
	// Unannounced, so the browser is not even told the trailer's name.
	delete(res.Trailer, CommandHeader)
	delete(res.Trailer, PassHeader)
	// The body of a 101 is the upgraded connection itself, which ReverseProxy
	// needs as an io.ReadWriteCloser; it has no trailers to strip.
	if res.StatusCode != http.StatusSwitchingProtocols && res.Body != nil && res.Body != http.NoBody {
		res.Body = &trailerBody{ReadCloser: res.Body, res: res, c: c}
	}
	return nil
}

// Commands are what an upstream may say in Waitroom-Command, in any case
// and comma-separated: "release" ends the visitor's session, "close" stops
// the room issuing tickets (sold out), "open" undoes close. Others are
// ignored.
var Commands = [...]string{"release", "close", "open"}

// command acts on Waitroom-Command values and makes sure one response
// gives each command once, whether it said so in a header, a trailer or
// both.
type command struct {
	u    *Upstream
	res  *http.Response
	done [len(Commands)]bool
}

func (c *command) take(h http.Header) {
	vs := h.Values(CommandHeader)
	if len(vs) == 0 {
		return
	}
	h.Del(CommandHeader)
	for i, name := range Commands {
		if c.done[i] || !hasToken(vs, name) {
			continue
		}
		c.done[i] = true
		if c.u.opt.OnCommand != nil {
			c.u.opt.OnCommand(c.res, name)
		}
	}
}

// trailerBody strips Waitroom-Command from the response trailers. The
// transport fills res.Trailer when the body reaches EOF (a trailer need not
// have been announced), and ReverseProxy copies it to the browser after
// Close, so EOF and Close are the moments to look.
type trailerBody struct {
	io.ReadCloser
	res  *http.Response
	c    *command
	once sync.Once
}

func (b *trailerBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.once.Do(b.strip)
	}
	return n, err
}

func (b *trailerBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.strip)
	return err
}

func (b *trailerBody) strip() {
	if b.res.Trailer != nil {
		b.c.take(b.res.Trailer)
		b.res.Trailer.Del(PassHeader)
	}
}

// recorder remembers the status sent, for OnDone, and the inbound request,
// for the error page: ReverseProxy hands ErrorHandler the outbound request,
// whose URL and Host name the upstream, not the page the visitor asked for.
type recorder struct {
	http.ResponseWriter
	in       *http.Request
	status   int
	hijacked bool
	// trace follows the request to the site (timing.go).
	trace *siteTrace
}

func (w *recorder) WriteHeader(code int) {
	// 1xx responses (103 Early Hints) are forwarded but are not the status.
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recorder) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach Flush and deadlines underneath.
func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Hijack is defined here rather than left to Unwrap because ReverseProxy
// writes the 101 on the hijacked connection, past WriteHeader.
func (w *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil {
		w.hijacked = true
		if w.status == 0 {
			w.status = http.StatusSwitchingProtocols
		}
	}
	return conn, brw, err
}

func (w *recorder) code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}
