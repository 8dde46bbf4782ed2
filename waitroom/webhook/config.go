package webhook

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Config is one entry of the webhooks list, as written in YAML:
//
//	webhooks:
//	  - url: https://shop.example.com/hooks/waitroom
//	    events: [queue.started, queue.drained, visitor.admitted]
//	    secret: ${WAITROOM_WEBHOOK_SECRET}
type Config struct {
	// URL receives a POST per event: an absolute http or https URL.
	URL string `mapstructure:"url" yaml:"url" json:"url"`
	// Events are the event types sent to it, at least one of Events.
	Events []string `mapstructure:"events" yaml:"events" json:"events"`
	// Secret signs its messages: "whsec_" and standard base64 of 24 to 64
	// random bytes, one per endpoint. Keep it in the environment.
	Secret string `mapstructure:"secret" yaml:"secret" json:"secret"`
}

// Endpoint is a Config built: where to send which events, and the key to
// sign them with.
type Endpoint struct {
	url    string
	events []EventType
	secret Secret
	origin string // scheme://host, what logs may show
}

// maxURL bounds a configured URL.
const maxURL = 2048

// Wants reports whether the endpoint subscribed to t.
func (e Endpoint) Wants(t EventType) bool { return slices.Contains(e.events, t) }

// String is the endpoint's scheme and host only: a URL's path or query may
// hold a token (many receivers put one there), so it is never logged.
func (e Endpoint) String() string { return e.origin }

// Validate reports every problem of the entry, each as "key: rule, got
// value" with keys relative to the entry. It changes nothing.
func (c Config) Validate() error {
	_, err := c.Build()
	return err
}

// Build checks the entry and returns it built, or every problem.
func (c Config) Build() (Endpoint, error) {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{key}, args...)...))
	}
	u, err := parseURL(c.URL)
	if err != nil {
		bad("url", "%v", err)
	}
	events := c.events(bad)
	secret, err := ParseSecret(c.Secret)
	if err != nil {
		bad("secret", "%v", err)
	}
	if err := errors.Join(errs...); err != nil {
		return Endpoint{}, err
	}
	return Endpoint{url: u.String(), events: events, secret: secret, origin: u.Scheme + "://" + u.Host}, nil
}

// parseURL accepts an absolute http or https URL with a host.
func parseURL(raw string) (*url.URL, error) {
	const rule = "must be an absolute http or https URL"
	if raw == "" {
		return nil, errors.New(rule + ", got none")
	}
	u, err := url.Parse(raw)
	if err != nil || len(raw) > maxURL {
		return nil, fmt.Errorf("%s, got %s", rule, describeURL(raw))
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return nil, fmt.Errorf("%s, got %s", rule, describeURL(raw))
	}
	return u, nil
}

// describeURL shows a wrong URL by its scheme and host only, as String
// does, so an error never carries a token from its path or query.
func describeURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "a value that does not parse as a URL"
	}
	if len(raw) > maxURL {
		return fmt.Sprintf("%d bytes, more than %d", len(raw), maxURL)
	}
	s := u.Host
	if u.Scheme != "" {
		s = u.Scheme + "://" + s
	}
	if u.Opaque != "" || u.Path != "" || u.RawQuery != "" {
		s += "/…"
	}
	return strconv.Quote(s)
}

// events checks the list: known types, each once, at least one.
func (c Config) events(bad func(key, format string, args ...any)) []EventType {
	if len(c.Events) == 0 {
		bad("events", "must list at least one of %s, got none", knownList())
	}
	out := make([]EventType, 0, len(c.Events))
	for i, name := range c.Events {
		key := fmt.Sprintf("events[%d]", i)
		t := EventType(strings.TrimSpace(name))
		switch {
		case !t.Known():
			bad(key, "unknown event %.64q (known: %s)", name, knownList())
		case slices.Contains(out, t):
			bad(key, "%q listed twice", name)
		default:
			out = append(out, t)
		}
	}
	return out
}

// BuildEndpoints builds the webhooks list, with every problem keyed by its
// place in the list ("[1].url: ..."); the caller puts "webhooks" in front.
func BuildEndpoints(list []Config) ([]Endpoint, error) {
	out := make([]Endpoint, 0, len(list))
	var errs []error
	for i, c := range list {
		e, err := c.Build()
		if err != nil {
			errs = append(errs, prefixed(fmt.Sprintf("[%d].", i), err)...)
			continue
		}
		out = append(out, e)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// prefixed puts prefix before every problem of a joined error.
func prefixed(prefix string, err error) []error {
	var list []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	} else {
		list = []error{err}
	}
	out := make([]error, len(list))
	for i, e := range list {
		out[i] = fmt.Errorf("%s%w", prefix, e)
	}
	return out
}
