package webhook_test

import (
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/waitroom/webhook"
)

const known = "known: queue.started, queue.drained, room.mode_changed, room.closed, visitor.admitted, room.autopilot_changed"

func TestConfig_ReportsEveryProblemByKey(t *testing.T) {
	t.Parallel()
	secret := newSecret(t)
	tests := []struct {
		name string
		c    webhook.Config
		want []string // every line of the error; none: valid
	}{
		{name: "valid", c: webhook.Config{URL: "https://shop.example.com/hooks?x=1", Events: []string{"queue.started", "visitor.admitted"}, Secret: secret}},
		{name: "http with port", c: webhook.Config{URL: "http://127.0.0.1:8080/h", Events: []string{"room.closed"}, Secret: secret}},
		{name: "all wrong", c: webhook.Config{URL: "ftp://files.example.com/in?token=s3cr3t", Events: []string{"queue.started", "x", "queue.started"}, Secret: "whsec_dG9vIHNob3J0"},
			want: []string{
				`url: must be an absolute http or https URL, got "ftp://files.example.com/…"`,
				`events[1]: unknown event "x" (` + known + `)`,
				`events[2]: "queue.started" listed twice`,
				`secret: must be "whsec_" followed by base64 of 24 to 64 bytes, got 9 bytes`,
			}},
		{name: "nothing", c: webhook.Config{},
			want: []string{
				`url: must be an absolute http or https URL, got none`,
				`events: must list at least one of queue.started, queue.drained, room.mode_changed, room.closed, visitor.admitted, room.autopilot_changed, got none`,
				`secret: must be "whsec_" followed by base64 of 24 to 64 bytes, got none`,
			}},
		{name: "relative url", c: webhook.Config{URL: "/hooks/abc", Events: []string{"room.closed"}, Secret: secret},
			want: []string{`url: must be an absolute http or https URL, got "/…"`}},
		{name: "no host", c: webhook.Config{URL: "https:///hooks", Events: []string{"room.closed"}, Secret: secret},
			want: []string{`url: must be an absolute http or https URL, got "https:///…"`}},
		{name: "opaque", c: webhook.Config{URL: "http:shop", Events: []string{"room.closed"}, Secret: secret},
			want: []string{`url: must be an absolute http or https URL, got "http:///…"`}},
		{name: "unparsable", c: webhook.Config{URL: "http://[::1", Events: []string{"room.closed"}, Secret: secret},
			want: []string{`url: must be an absolute http or https URL, got a value that does not parse as a URL`}},
		{name: "huge url", c: webhook.Config{URL: "https://a.example/" + strings.Repeat("p", 3000), Events: []string{"room.closed"}, Secret: secret},
			want: []string{`url: must be an absolute http or https URL, got 3018 bytes, more than 2048`}},
		{name: "secret without prefix", c: webhook.Config{URL: "https://a.example/", Events: []string{"room.closed"}, Secret: strings.TrimPrefix(secret, "whsec_")},
			want: []string{`secret: must be "whsec_" followed by base64 of 24 to 64 bytes, got no "whsec_" prefix`}},
		{name: "long unknown event", c: webhook.Config{URL: "https://a.example/", Events: []string{strings.Repeat("e", 500)}, Secret: secret},
			want: []string{`events[0]: unknown event "` + strings.Repeat("e", 64) + `" (` + known + `)`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.c.Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Validate = %v, want none", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate = nil, want %q", tc.want)
			}
			if got := strings.Split(err.Error(), "\n"); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("Validate:\n%s\nwant:\n%s", err, strings.Join(tc.want, "\n"))
			}
			for _, leak := range []string{"s3cr3t", "dG9vIHNob3J0", "token", strings.TrimPrefix(secret, "whsec_")} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("error holds %q", leak)
				}
			}
		})
	}
}

func TestBuildEndpoints_KeysProblemsByPlace(t *testing.T) {
	t.Parallel()
	secret := newSecret(t)
	list := []webhook.Config{
		{URL: "https://a.example/h", Events: []string{"queue.started"}, Secret: secret},
		{URL: "gopher://b", Events: []string{"queue.started"}, Secret: secret},
		{URL: "https://c.example/h", Events: []string{"queue.drained", "nope"}, Secret: ""},
	}
	_, err := webhook.BuildEndpoints(list)
	want := `[1].url: must be an absolute http or https URL, got "gopher://b"
[2].events[1]: unknown event "nope" (` + known + `)
[2].secret: must be "whsec_" followed by base64 of 24 to 64 bytes, got none`
	if err == nil || err.Error() != want {
		t.Fatalf("BuildEndpoints error:\n%v\nwant:\n%s", err, want)
	}
	eps, err := webhook.BuildEndpoints(list[:1])
	if err != nil || len(eps) != 1 {
		t.Fatalf("BuildEndpoints(valid) = %d, %v", len(eps), err)
	}
	if !eps[0].Wants(webhook.QueueStarted) || eps[0].Wants(webhook.QueueDrained) {
		t.Error("Wants disagrees with the events listed")
	}
	if got := eps[0].String(); got != "https://a.example" {
		t.Errorf("String = %q, want the origin only", got)
	}
}

func TestDeliveryConfig_DefaultsAndBounds(t *testing.T) {
	t.Parallel()
	d, err := webhook.DefaultDeliveryConfig().Build()
	want := webhook.Delivery{QueueSize: 1000, Workers: 8, MaxAttempts: 8, BackoffBase: 2 * time.Second,
		BackoffMax: 5 * time.Minute, Timeout: 15 * time.Second, ClaimTTL: time.Hour}
	if err != nil || d != want {
		t.Fatalf("defaults = %+v, %v; want %+v", d, err, want)
	}
	bad := webhook.DeliveryConfig{QueueSize: 0, Workers: 1000, MaxAttempts: -1,
		BackoffBase: "10", BackoffMax: "1ms", Timeout: "forever", ClaimTTL: "10ms"}
	wantErr := `queue_size: must be from 1 to 100000, got 0
workers: must be from 1 to 256, got 1000
max_attempts: must be from 1 to 30, got -1
backoff_base: want a duration with a unit such as "10s", got "10"
timeout: want a duration such as "15s" or "2m", got "forever"
claim_ttl: must be from 1s to 168h0m0s, got "10ms"`
	if _, err := bad.Build(); err == nil || err.Error() != wantErr {
		t.Errorf("Build error:\n%v\nwant:\n%s", err, wantErr)
	}
	inverted := webhook.DefaultDeliveryConfig()
	inverted.BackoffBase, inverted.BackoffMax = "1m", "10s"
	if err := inverted.Validate(); err == nil || err.Error() != `backoff_max: must be >= backoff_base ("1m"), got "10s"` {
		t.Errorf("inverted backoff: %v", err)
	}
}
