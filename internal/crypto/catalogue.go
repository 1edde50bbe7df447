package crypto

import (
	"fmt"
	"slices"
	"strings"
)

var (
	suites    []Suite
	byName    = map[string]*Suite{}
	byID      = map[uint16]*Suite{}
	byAltName = map[string]*Suite{} // OpenSSL and JSSE names
)

func init() {
	suites = make([]Suite, 0, len(table))
	for _, row := range table {
		s, err := parseName(row.name)
		if err != nil {
			panic("crypto: catalogue: " + err.Error()) // the table is source code; a test covers it
		}
		s.ID, s.OpenSSLName, s.JSSEName = row.id, row.ossl, row.jsse
		s.MinVersion, s.MaxVersion, s.Libraries = row.min, row.max, row.libs
		suites = append(suites, s)
	}
	for i := range suites {
		s := &suites[i]
		byName[s.Name] = s
		byID[s.ID] = s
		for _, alt := range []string{s.OpenSSLName, s.JSSEName} {
			if alt != "" && alt != s.Name {
				byAltName[alt] = s
			}
		}
	}
}

// All returns every suite in the catalogue, ordered by IANA code point.
func All() []Suite { return slices.Clone(suites) }

// Lookup finds a suite by its IANA name.
func Lookup(name string) (Suite, bool) {
	s, ok := byName[name]
	if !ok {
		return Suite{}, false
	}
	return *s, true
}

// LookupID finds a suite by its IANA code point.
func LookupID(id uint16) (Suite, bool) {
	s, ok := byID[id]
	if !ok {
		return Suite{}, false
	}
	return *s, true
}

// LookupAny finds a suite by its IANA, OpenSSL or JSSE name. Users paste names from all three
// worlds; error messages use this to say which IANA name they meant.
func LookupAny(name string) (Suite, bool) {
	if s, ok := Lookup(name); ok {
		return s, true
	}
	s, ok := byAltName[name]
	if !ok {
		return Suite{}, false
	}
	return *s, true
}

// Filter returns the suites for which keep returns true, in catalogue order.
func Filter(keep func(Suite) bool) []Suite {
	var out []Suite
	for _, s := range suites {
		if keep(s) {
			out = append(out, s)
		}
	}
	return out
}

// Names returns the IANA names of the given suites.
func Names(ss []Suite) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Name
	}
	return out
}

// CheckSuiteName explains why a user-supplied suite name cannot be used, or returns nil.
func CheckSuiteName(name string) error {
	s, ok := Lookup(name)
	if !ok {
		if alt, ok := LookupAny(name); ok {
			return fmt.Errorf("%q is not an IANA name; write %s", name, alt.Name)
		}
		return fmt.Errorf("%q is not a TLS cipher suite known to OpenSSL, BoringSSL, the JDK or Go", name)
	}
	if why := s.Weakness(); why != "" {
		return fmt.Errorf("%s is not allowed: %s", name, why)
	}
	return nil
}

func (s Suite) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (0x%04X, %s-%s, kx=%s au=%s %s-%d %s", s.Name, s.ID, ProtocolName(s.MinVersion), ProtocolName(s.MaxVersion),
		s.KeyExchange, s.Authentication, s.Cipher, s.KeyBits, s.Mode)
	if !s.AEAD {
		fmt.Fprintf(&b, " mac=%s", s.MAC)
	}
	b.WriteString(")")
	return b.String()
}
