package main

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// lookupFunc resolves a host name, as net.Resolver.LookupNetIP does; tests
// pass their own so that no test depends on the machine's resolver.
type lookupFunc func(ctx context.Context, network, host string) ([]netip.Addr, error)

// checkLoopback refuses a URL whose host is not a loopback address. A load
// generator aimed at someone else's site is an attack, so the default is to
// load only this machine; every address a name resolves to must be
// loopback, since the dialer may pick any of them.
func checkLoopback(ctx context.Context, flagName string, u *url.URL, lookup lookupFunc) error {
	host := u.Hostname()
	hint := "; pass -allow-remote to load a gateway you run elsewhere"
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.Unmap().IsLoopback() {
			return nil
		}
		return fmt.Errorf("-%s %s: %s is not a loopback address (127.0.0.0/8, ::1)%s", flagName, u.Redacted(), host, hint)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := lookup(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("-%s %s: resolving %s: %w", flagName, u.Redacted(), host, err)
	}
	if len(addrs) == 0 {
		return fmt.Errorf("-%s %s: %s resolves to no address", flagName, u.Redacted(), host)
	}
	var remote []string
	for _, a := range addrs {
		if !a.Unmap().IsLoopback() {
			remote = append(remote, a.String())
		}
	}
	if len(remote) > 0 {
		return fmt.Errorf("-%s %s: %s resolves to %s, not a loopback address%s",
			flagName, u.Redacted(), host, strings.Join(remote, ", "), hint)
	}
	return nil
}

// checkTargets applies checkLoopback to every target and the admin URL.
func checkTargets(ctx context.Context, c config, lookup lookupFunc) error {
	if c.allowRemote {
		return nil
	}
	for _, t := range c.targets {
		if err := checkLoopback(ctx, "target", t, lookup); err != nil {
			return err
		}
	}
	if c.admin != nil {
		return checkLoopback(ctx, "admin", c.admin, lookup)
	}
	return nil
}

// systemLookup is the machine's resolver.
func systemLookup(ctx context.Context, network, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, network, host)
}
