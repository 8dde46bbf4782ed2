package metrics

import "bytes"

// The device classes of waitroom_devices_total.
var deviceClasses = [...]string{"phone", "tablet", "desktop", "bot", "unknown"}

const (
	devicePhone = iota
	deviceTablet
	deviceDesktop
	deviceBot
	deviceUnknown
)

// uaPrefix is how much of a User-Agent DeviceClass reads: every real
// browser's tokens come well before it, and a longer header (a flood of
// junk) costs no more than this.
const uaPrefix = 256

// Tokens, lower case, of a User-Agent that is not a person's browser:
// crawlers (which name themselves "...bot/" and put a URL after "+"),
// headless browsers, and HTTP libraries that keep their default.
// "bot/", "bot;" and "bot)" rather than "bot", so a CUBOT phone is a phone.
var botTokens = [][]byte{
	[]byte("bot/"), []byte("bot;"), []byte("bot)"), []byte("+http"), []byte("crawl"), []byte("spider"),
	[]byte("slurp"), []byte("headless"), []byte("phantomjs"), []byte("curl/"), []byte("wget/"),
	[]byte("python-"), []byte("python/"), []byte("go-http-client"), []byte("java/"), []byte("libwww"),
	[]byte("scrapy"), []byte("httpclient"), []byte("node-fetch"), []byte("axios/"), []byte("facebookexternalhit"),
}

var (
	tabletTokens  = [][]byte{[]byte("ipad"), []byte("tablet"), []byte("kindle"), []byte("silk/"), []byte("playbook")}
	phoneTokens   = [][]byte{[]byte("iphone"), []byte("ipod"), []byte("windows phone"), []byte("mobile"), []byte("opera mini"), []byte("blackberry")}
	desktopTokens = [][]byte{[]byte("windows nt"), []byte("macintosh"), []byte("mac os x"), []byte("x11"), []byte("cros"), []byte("linux")}
)

// DeviceClass sorts a User-Agent into phone, tablet, desktop, bot (a
// crawler, a headless browser or an HTTP library) or unknown (empty, or
// nothing it knows). It reads the first uaPrefix bytes only and allocates
// nothing. Bot comes first, since a crawler often poses as a phone
// ("... Android ... Mobile ... Googlebot/2.1"); tablet before phone, since
// an Android tablet is an Android without "Mobile" and a Kindle's Silk
// says "Android" too. An iPad on iPadOS 13 or later sends a Mac's
// User-Agent and counts as a desktop: nothing in the header tells them
// apart.
func DeviceClass(ua string) string {
	return deviceClasses[deviceOf(ua)]
}

func deviceOf(ua string) int {
	if ua == "" {
		return deviceUnknown
	}
	var buf [uaPrefix]byte
	n := copy(buf[:], ua)
	b := buf[:n]
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	switch {
	case anyOf(b, botTokens):
		return deviceBot
	case anyOf(b, tabletTokens):
		return deviceTablet
	case bytes.Contains(b, []byte("android")):
		if bytes.Contains(b, []byte("mobile")) {
			return devicePhone
		}
		return deviceTablet
	case anyOf(b, phoneTokens):
		return devicePhone
	case anyOf(b, desktopTokens):
		return deviceDesktop
	}
	return deviceUnknown
}

func anyOf(b []byte, tokens [][]byte) bool {
	for _, t := range tokens {
		if bytes.Contains(b, t) {
			return true
		}
	}
	return false
}
