package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"time"

	"go.uber.org/zap"
)

// runBots sends n simulated visitors through the demo room, one every
// 300 ms: each joins, polls its status as a page would, shops for stay
// once admitted, then checks out and so frees its place. Each makes a
// bounded number of requests and they all stop with ctx.
func runBots(ctx context.Context, base string, n int, stay time.Duration, log *zap.Logger) {
	done := make(chan struct{}, n)
	for i := range n {
		go func() {
			defer func() { done <- struct{}{} }()
			if err := bot(ctx, base, stay); err != nil && ctx.Err() == nil {
				log.Warn("simulated visitor gave up", zap.Int("bot", i+1), zap.Error(err))
			}
		}()
		select {
		case <-ctx.Done():
		case <-time.After(300 * time.Millisecond):
		}
	}
	for range n {
		<-done
	}
}

type botStatus struct {
	State        string `json:"state"`
	RefreshAfter int    `json:"refresh_after"`
}

func bot(ctx context.Context, base string, stay time.Duration) error {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	st, err := botGet(ctx, c, base+"/")
	if err != nil {
		return err
	}
	// A bounded wait: at most 600 polls, then the bot gives up.
	for polls := 0; st.State == "waiting" && polls < 600; polls++ {
		wait := time.Duration(max(st.RefreshAfter, 1)) * time.Second
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		if st, err = botGet(ctx, c, base+"/.waitroom/status?room=demo"); err != nil {
			return err
		}
	}
	if st.State != "admitted" && st.State != "" {
		return fmt.Errorf("ended in state %q", st.State)
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(stay):
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/checkout", nil)
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

// botGet asks for JSON; the shop answers HTML, which means "inside".
func botGet(ctx context.Context, c *http.Client, url string) (botStatus, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return botStatus{}, err
	}
	defer resp.Body.Close()
	var st botStatus
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return st, nil // the shop's page: admitted
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&st); err != nil {
		return st, fmt.Errorf("reading status: %w", err)
	}
	return st, nil
}
