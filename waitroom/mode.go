package waitroom

import (
	"errors"
	"fmt"
	"time"
)

// Mode is how a room lets visitors in.
type Mode string

// The modes. The zero Mode is FIFO.
const (
	// ModeFIFO admits in ticket order (the default).
	ModeFIFO Mode = "fifo"
	// ModeRandom admits at random from the whole line.
	ModeRandom Mode = "random"
	// ModePassthrough lets everyone in at once, still counting them.
	ModePassthrough Mode = "passthrough"
	// ModeReject turns away everyone not inside yet with a "closed" page.
	ModeReject Mode = "reject"
	// ModePaused admits nobody; the line keeps its order and people inside
	// stay inside.
	ModePaused Mode = "paused"
)

// ParseMode reads a mode; "" is fifo.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case "":
		return ModeFIFO, nil
	case ModeFIFO, ModeRandom, ModePassthrough, ModeReject, ModePaused:
		return m, nil
	}
	return "", fmt.Errorf(`must be "fifo", "random", "passthrough", "reject" or "paused", got %q`, s)
}

// Override is a change to a room made at run time (the admin API). It lives
// in the store, so every instance applies it within one tick and it outlives
// a gateway restart. A nil or empty field keeps the configured value.
type Override struct {
	MaxActive *int  `json:"max_active,omitempty"`
	AdmitRate *Rate `json:"admit_rate,omitempty"`
	Mode      Mode  `json:"mode,omitempty"`
	// Message is shown on the room's waiting page; "" keeps the configured one.
	Message *string `json:"message,omitempty"`
	// By says who last changed the mode: "admin" (the admin API) or
	// "upstream" (the site's Waitroom-Command); "" keeps the stored one.
	By string `json:"by,omitempty"`
	// Changed is when the override was last written, by the store's clock.
	Changed time.Time `json:"changed,omitzero"`
}

// Validate refuses what a store could not keep or read back: a negative
// max_active, a rate that its String does not spell back (only whole
// numbers per second, minute or hour), an unknown mode. Stores call it
// before writing anything.
func (o Override) Validate() error {
	var errs []error
	if o.MaxActive != nil && *o.MaxActive < 0 {
		errs = append(errs, fmt.Errorf("max_active: must be >= 0, got %d", *o.MaxActive))
	}
	if r := o.AdmitRate; r != nil && !r.IsUnlimited() {
		if back, err := ParseRate(r.String()); err != nil || back != *r {
			errs = append(errs, fmt.Errorf("admit_rate: want 1 to 1e9 per second, minute or hour, got %d per %v", r.N, r.Per))
		}
	}
	if o.Mode != "" {
		if _, err := ParseMode(string(o.Mode)); err != nil {
			errs = append(errs, fmt.Errorf("mode: %w", err))
		}
	}
	if o.By != "" && o.By != "admin" && o.By != "upstream" {
		errs = append(errs, fmt.Errorf(`by: want "admin" or "upstream", got %q`, o.By))
	}
	return errors.Join(errs...)
}

// IsZero reports whether the override changes nothing.
func (o Override) IsZero() bool {
	return o.MaxActive == nil && o.AdmitRate == nil && o.Mode == "" && o.Message == nil
}

// Set returns the room's limits with the override's on top, as the
// operator set them: what the room admits by while it admits at all. A
// paused or closed room keeps its max_active here (Apply's is 0), so the
// dashboard shows, and a save writes back, the operator's figure, never the
// 0 that only stands for "nobody now".
func (o Override) Set(r Room) Limits {
	lim := r.Limits
	if o.MaxActive != nil {
		lim.MaxActive = *o.MaxActive
	}
	if o.AdmitRate != nil {
		lim.AdmitRate = *o.AdmitRate
		lim.AdmitBurst = o.AdmitRate.DefaultBurst()
	}
	return lim
}

// Apply returns the limits and mode in effect: the room's own with the
// override on top, shaped so a store needs to know nothing of modes:
// paused and reject admit nobody new (MaxActive 0 for admissions; sessions
// inside go on), passthrough admits everyone at once (no limits, still
// counted), random sets Random.
func (o Override) Apply(r Room) (Limits, Mode) {
	lim, mode := o.Set(r), r.Mode
	if o.Mode != "" {
		mode = o.Mode
	}
	if r.Closing {
		mode = ModeReject // no override reopens a room being deleted
	}
	switch mode {
	case ModePaused, ModeReject:
		lim.MaxActive = 0
	case ModePassthrough:
		lim.MaxActive, lim.AdmitRate, lim.AdmitBurst = passthroughMax, Rate{}, 0
	case ModeRandom:
		lim.Random = true
	case "":
		mode = ModeFIFO
	}
	return lim, mode
}

// passthroughMax stands for "no limit" in MaxActive.
const passthroughMax = 1 << 30
