package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// limits are the room's configured pace, from the admin API or flags.
type limits struct {
	Room      string   `json:"room,omitempty"`
	MaxActive *int     `json:"max_active,omitempty"`
	AdmitRate string   `json:"admit_rate,omitempty"` // "600/m", "unlimited"
	PerMinute *float64 `json:"admit_per_minute,omitempty"`
	Source    string   `json:"source"` // "admin API", "flags" or "none"
}

// roomView is the part of the admin API's room the report needs.
type roomView struct {
	Name      string `json:"name"`
	Effective struct {
		MaxActive int    `json:"max_active"`
		AdmitRate string `json:"admit_rate"`
	} `json:"effective"`
}

// flagLimits are the limits -expect-rate and -expect-max-active give.
func flagLimits(c config) limits {
	l := limits{Source: "none", Room: c.room}
	if c.expectMax >= 0 {
		l.MaxActive, l.Source = &c.expectMax, "flags"
	}
	if c.expectRate != "" {
		l.AdmitRate, l.Source = c.expectRate, "flags"
		l.PerMinute = perMinute(c.expectRate)
	}
	return l
}

// adminLimits asks the admin API for the room's limits in effect. Without
// -room it takes the gateway's only room, and refuses to guess among several.
func adminLimits(ctx context.Context, c config) (limits, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var v roomView
	if c.room != "" {
		if err := adminGet(ctx, c, "/admin/api/rooms/"+url.PathEscape(c.room), &v); err != nil {
			return limits{}, err
		}
	} else {
		var list struct{ Rooms []roomView }
		if err := adminGet(ctx, c, "/admin/api/rooms", &list); err != nil {
			return limits{}, err
		}
		if len(list.Rooms) != 1 {
			var names []string
			for _, r := range list.Rooms {
				names = append(names, r.Name)
			}
			return limits{}, fmt.Errorf("the gateway has %d rooms (%s); name the target's with -room", len(list.Rooms), strings.Join(names, ", "))
		}
		v = list.Rooms[0]
	}
	m := v.Effective.MaxActive
	return limits{Room: v.Name, MaxActive: &m, AdmitRate: v.Effective.AdmitRate,
		PerMinute: perMinute(v.Effective.AdmitRate), Source: "admin API"}, nil
}

func adminGet(ctx context.Context, c config, path string, into any) error {
	u := c.admin.ResolveReference(&url.URL{Path: strings.TrimSuffix(c.admin.Path, "/") + path})
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if c.adminToken != "" {
		req.Header.Set("Authorization", "Bearer "+c.adminToken)
	}
	t := newTransport(5 * time.Second)
	defer t.CloseIdleConnections()
	resp, err := (&http.Client{Transport: t}).Do(req)
	if err != nil {
		return fmt.Errorf("asking the admin API %s: %w", u.Redacted(), err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return errors.New("the admin API refused the token (401): set -admin-token or $WAITROOM_ADMIN_TOKEN")
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("the admin API answered %s for %s: %.200s", resp.Status, u.Path, body)
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("reading the admin API's answer for %s: %w", u.Path, err)
	}
	return nil
}

// perMinute reads "600/m" as 600; nil for "unlimited" or anything else.
func perMinute(rate string) *float64 {
	n, per, err := parseRate(rate)
	if err != nil {
		return nil
	}
	m := n * float64(time.Minute) / float64(per)
	return &m
}
