package metrics

import (
	"strings"
	"testing"
)

// Real User-Agent strings, as the browsers, apps and crawlers send them.
func TestDeviceClass(t *testing.T) {
	for _, c := range []struct{ ua, want string }{
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1", "phone"},
		{"Mozilla/5.0 (Linux; Android 14; SM-S918N) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36", "phone"},
		{"Mozilla/5.0 (Linux; Android 13; SAMSUNG SM-A536N) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36", "phone"},
		{"Mozilla/5.0 (Android 14; Mobile; rv:125.0) Gecko/125.0 Firefox/125.0", "phone"},
		{"Mozilla/5.0 (Linux; Android 9; CUBOT X19) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36", "phone"},
		{"Mozilla/5.0 (Windows Phone 10.0; Android 6.0.1; Microsoft; Lumia 950) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/52.0.2743.116 Mobile Safari/537.36 Edge/15.15063", "phone"},
		{"Dalvik/2.1.0 (Linux; U; Android 13; SM-G991N Build/TP1A.220624.014)", "tablet"}, // no "Mobile": it cannot tell
		{"MyShop/3.2.1 (iPhone; iOS 17.4; Scale/3.00) Alamofire/5.8.0", "phone"},
		{"Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1", "tablet"},
		{"Mozilla/5.0 (Linux; Android 13; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36", "tablet"},
		{"Mozilla/5.0 (Linux; Android 11; KFTRWI) AppleWebKit/537.36 (KHTML, like Gecko) Silk/124.2.1 like Chrome/124.0.6367.118 Mobile Safari/537.36", "tablet"},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36", "desktop"},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0", "desktop"},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15", "desktop"},
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36", "desktop"},
		{"Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36", "desktop"},
		{"Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.201 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "bot"},
		{"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", "bot"},
		{"Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)", "bot"},
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/124.0.0.0 Safari/537.36", "bot"},
		{"curl/8.5.0", "bot"},
		{"Wget/1.21.4", "bot"},
		{"python-requests/2.31.0", "bot"},
		{"Go-http-client/1.1", "bot"},
		{"Java/17.0.2", "bot"},
		{"Scrapy/2.11.1 (+https://scrapy.org)", "bot"},
		{"", "unknown"},
		{"PostmanRuntime/7.37.3", "unknown"},
		{"totally random junk", "unknown"},
		// Past the prefix nothing counts: a token after 256 bytes of junk is not read.
		{strings.Repeat("x", uaPrefix) + " iPhone", "unknown"},
	} {
		if got := DeviceClass(c.ua); got != c.want {
			t.Errorf("DeviceClass(%q) = %s, want %s", c.ua, got, c.want)
		}
	}
}

func TestDeviceClass_NoAllocs(t *testing.T) {
	ua := "Mozilla/5.0 (Linux; Android 14; SM-S918N) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36" + strings.Repeat(" junk", 500)
	if n := testing.AllocsPerRun(100, func() { DeviceClass(ua) }); n != 0 {
		t.Fatalf("DeviceClass allocates %v times", n)
	}
}
