package web

import (
	"net/http/httptest"
	"testing"
)

func TestLocale(t *testing.T) {
	t.Parallel()
	tests := []struct {
		header, def, want string
	}{
		{"ko-KR,ko;q=0.9,en-US;q=0.8,en;q=0.7", "en", "ko"},
		{"ko-KR", "en", "ko"},
		{"KO", "en", "ko"},
		{"en;q=0.1, ko", "en", "ko"},
		{"en-US,en;q=0.9", "ko", "en"},
		{"fr-FR, en;q=0.5", "ko", "en"},
		{"fr-FR, de", "ko", "ko"},
		{"*", "ko", "ko"},
		{"*", "en", "en"},
		{"ko;q=0, *", "ko", "en"},
		{"ja, *;q=0.5, ko;q=0.6", "en", "ko"},
		{"", "ko", "ko"},
		{"", "", "en"},
		{"", "fr", "en"},
		{"garbage;;;,,=", "ko", "ko"},
		{"ko;q=2, en", "ko", "en"}, // an unreadable q drops the element
		{"ko;q=abc", "en", "en"},
		{"koala, english", "ko", "ko"}, // prefixes are subtags, not strings
	}
	for _, tt := range tests {
		t.Run(tt.header+"/"+tt.def, func(t *testing.T) {
			t.Parallel()
			if got := Locale(tt.header, tt.def); got != tt.want {
				t.Errorf("Locale(%q, %q) = %q, want %q", tt.header, tt.def, got, tt.want)
			}
		})
	}
}

func TestWantsJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		accept string
		want   bool
	}{
		{"", false},
		{"*/*", false},
		{"text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8", false},
		{"application/json", true},
		{"Application/JSON; charset=utf-8", true},
		{"application/json, text/plain, */*", true}, // axios
		{"application/problem+json", true},
		{"application/*+json", true},
		{"*/*+json", true},
		{"application/vnd.api+json;q=0.9, text/html;q=0.8", true},
		{"application/json;q=0.5, text/html", false},
		{"text/html;q=0.5, application/json", true},
		{"application/json, text/html", false}, // a tie with both named: the page
		{"application/json;q=0", false},
		{"application/json;q=0, */*", false},
		{"application/*", true}, // HTML is not acceptable at all
		{"text/*, application/json;q=0.9", false},
		{"application/json;q=bogus", false},
	}
	for _, tt := range tests {
		t.Run(tt.accept, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest("GET", "/", nil)
			if tt.accept != "" {
				r.Header.Set("Accept", tt.accept)
			}
			if got := WantsJSON(r); got != tt.want {
				t.Errorf("WantsJSON(Accept: %q) = %v, want %v", tt.accept, got, tt.want)
			}
		})
	}
}
