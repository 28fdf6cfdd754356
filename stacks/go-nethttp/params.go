package main

import (
	"net/url"
	"strconv"
)

// intParam reads a decimal integer query parameter: absent → def, anything that is not
// plain decimal digits or lies outside [lo, hi] → 400 (contracts section 1).
func intParam(params url.Values, name string, def, lo, hi int) (int, error) {
	if !params.Has(name) {
		return def, nil
	}
	raw := params.Get(name)
	if !isDecimal(raw) {
		return 0, badRequest("%s must be a decimal integer in %d..%d, got %q", name, lo, hi, raw)
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < lo || n > hi {
		return 0, badRequest("%s must be a decimal integer in %d..%d, got %q", name, lo, hi, raw)
	}
	return n, nil
}

func isDecimal(s string) bool {
	if s == "" || len(s) > 18 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// tfbQueryCount applies the TechEmpower rule: missing or garbage → 1, clamped to 1..500.
func tfbQueryCount(params url.Values) int {
	n, err := strconv.Atoi(params.Get("queries"))
	switch {
	case err != nil || n < 1:
		return 1
	case n > 500:
		return 500
	default:
		return n
	}
}
