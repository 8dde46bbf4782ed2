package challenge

import (
	"math"
	"strings"
	"testing"
)

func TestPolicy_Bits(t *testing.T) {
	t.Parallel()
	p := DefaultPolicy()
	p.Free = 3 // the cases' numbers
	tests := []struct {
		name string
		load Load
		want int
	}{
		{"a person, one ticket a minute", Load{Recent: 1}, p.Base},
		{"a person with three tabs", Load{Recent: 3}, p.Base},
		{"nothing counted yet", Load{}, p.Base},
		{"a miscount", Load{Recent: -7, Pressure: -1}, p.Base},
		{"four a minute: one doubling past the allowance", Load{Recent: 4}, p.Base + 1},
		{"six", Load{Recent: 6}, p.Base + 1},
		{"seven", Load{Recent: 7}, p.Base + 2},
		{"a household of 12", Load{Recent: 12}, p.Base + 2},
		{"a farm of 1000 a minute", Load{Recent: 1000}, p.Base + 9},
		{"a farm of 8000 a minute hits the cap", Load{Recent: 8000}, p.Max},
		{"no overflow", Load{Recent: math.MaxInt}, p.Max},
		{"a line that keeps up", Load{Recent: 1, Pressure: 1}, p.Base},
		{"1.9 times oversubscribed", Load{Recent: 1, Pressure: 1.9}, p.Base},
		{"twice", Load{Recent: 1, Pressure: 2}, p.Base + 1},
		{"four times", Load{Recent: 1, Pressure: 4}, p.Base + 2},
		{"a thousand times, capped", Load{Recent: 1, Pressure: 1000}, p.Base + p.PressureMax},
		{"NaN", Load{Recent: 1, Pressure: math.NaN()}, p.Base},
		{"+Inf", Load{Recent: 1, Pressure: math.Inf(1)}, p.Base + p.PressureMax},
		{"-Inf", Load{Recent: 1, Pressure: math.Inf(-1)}, p.Base},
		{"a farm in a rush", Load{Recent: 1000, Pressure: 3}, p.Base + 10},
	}
	for _, tt := range tests {
		if got := p.Bits(tt.load); got != tt.want {
			t.Errorf("%s: Bits(%+v) = %d, want %d", tt.name, tt.load, got, tt.want)
		}
	}
}

// TestPolicy_FarmPays holds the policy to the promise: a person
// pays the base, a farm of 1000 tickets a minute from one network pays at
// least 2^8 times the base work for each place, whatever the line does.
func TestPolicy_FarmPays(t *testing.T) {
	t.Parallel()
	p := DefaultPolicy()
	p.Free = 3 // a person's three tabs
	for _, pressure := range []float64{0, 1.5, 3, 100} {
		person := p.Bits(Load{Recent: 3, Pressure: pressure})
		farm := p.Bits(Load{Recent: 1000, Pressure: pressure})
		if person != p.Bits(Load{Recent: 1, Pressure: pressure}) {
			t.Errorf("pressure %v: three tickets a minute pay %d bits, one pays %d", pressure, person, p.Bits(Load{Recent: 1}))
		}
		if farm-person < 8 {
			t.Errorf("pressure %v: the farm pays 2^%d times a person's work", pressure, farm-person)
		}
	}
	if got := p.Bits(Load{Recent: 1}); got != p.Base {
		t.Errorf("a person pays %d bits, base %d", got, p.Base)
	}
}

func TestPolicy_Edges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		p    Policy
		load Load
		want int
	}{
		{Policy{Base: 10, Max: 10, Free: 3, PressureMax: 8}, Load{Recent: 1000, Pressure: 1000}, 10},
		{Policy{Base: 10, Max: 40, Free: 0, PressureMax: 0}, Load{Recent: 2}, 11}, // Free 0 acts as 1
		{Policy{Base: 30, Max: 99, Free: 1, PressureMax: 8}, Load{Recent: 1 << 20}, MaxBits},
		{Policy{Base: -5, Max: 3, Free: 1}, Load{Recent: 1}, 0},
	}
	for _, tt := range tests {
		if got := tt.p.Bits(tt.load); got != tt.want {
			t.Errorf("%+v.Bits(%+v) = %d, want %d", tt.p, tt.load, got, tt.want)
		}
	}
}

func TestPolicy_Validate(t *testing.T) {
	t.Parallel()
	if err := DefaultPolicy().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	err := Policy{Base: 33, Max: 2, Free: 0, PressureMax: 9}.Validate()
	for _, key := range []string{"challenge_bits:", "challenge_max_bits:", "challenge_free:", "challenge_pressure_bits:"} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("Validate() = %v, lacks %s", err, key)
		}
	}
	if err := (Policy{Base: 4, Max: 3, Free: 1}).Validate(); err == nil || !strings.Contains(err.Error(), "challenge_max_bits") {
		t.Errorf("a cap under the base: %v", err)
	}
}
