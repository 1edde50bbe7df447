// Command gencel writes the CRD validation rules that depend on the cipher-suite catalogue into
// the API types, between "+secured:generated:begin NAME" and "+secured:generated:end NAME"
// marker lines, so that internal/crypto stays the single source of truth and the API server
// rejects exactly what the operator would. Run through `make generate`; a test fails when the
// checked-in rules are stale.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/crypto"
)

func main() {
	dir := flag.String("dir", "api/v1alpha1", "directory of the API types")
	flag.Parse()
	blocks := map[string][]string{
		"cipher-suite-rules": cipherSuiteRules(),
		"tls-rules":          tlsRules(),
		"compliance-rules":   complianceRules(),
	}
	files, err := filepath.Glob(filepath.Join(*dir, "*_types.go"))
	if err != nil {
		fail(err)
	}
	done := map[string]bool{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			fail(err)
		}
		out := src
		for name, lines := range blocks {
			var replaced bool
			out, replaced = replaceBlock(out, name, lines)
			done[name] = done[name] || replaced
		}
		if !bytes.Equal(out, src) {
			if err := os.WriteFile(f, out, 0o644); err != nil {
				fail(err)
			}
		}
	}
	for name := range blocks {
		if !done[name] {
			fail(fmt.Errorf("no %q block found in %s", name, *dir))
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gencel:", err)
	os.Exit(1)
}

func replaceBlock(src []byte, name string, lines []string) ([]byte, bool) {
	re := regexp.MustCompile(`(?ms)^(\s*)// \+secured:generated:begin ` + regexp.QuoteMeta(name) + `\n.*?^\s*// \+secured:generated:end ` + regexp.QuoteMeta(name) + `\n`)
	m := re.FindSubmatchIndex(src)
	if m == nil {
		return src, false
	}
	indent := string(src[m[2]:m[3]])
	var b strings.Builder
	fmt.Fprintf(&b, "%s// +secured:generated:begin %s\n", indent, name)
	for _, l := range lines {
		fmt.Fprintf(&b, "%s// %s\n", indent, l)
	}
	fmt.Fprintf(&b, "%s// +secured:generated:end %s\n", indent, name)
	return slices.Concat(src[:m[0]], []byte(b.String()), src[m[1]:]), true
}

// celList renders a CEL list literal of strings.
func celList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = "'" + s + "'"
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func xvalidation(rule, messageExpression, fieldPath string) string {
	s := fmt.Sprintf("+kubebuilder:validation:XValidation:rule=%q,messageExpression=%q", rule, messageExpression)
	if fieldPath != "" {
		s += fmt.Sprintf(",fieldPath=%q", fieldPath)
	}
	return s
}

// weakClasses maps a substring of an IANA name to the reason Suite.Weakness gives, in the
// same order, so the CRD can explain a refusal without carrying the reasons per suite.
// cipherSuiteRules checks that the two agree for every suite in the catalogue.
var weakClasses = []struct{ substring, reason string }{
	{"_NULL_", "NULL encryption sends data in clear text"},
	{"EXPORT", "EXPORT suites use deliberately weakened 40/56-bit keys"},
	{"_anon_", "anonymous suites do not authenticate the server and allow man-in-the-middle attacks"},
	{"_RC4_", "RC4 is broken (RFC 7465 prohibits it)"},
	{"_DES_CBC_", "single DES keys can be brute-forced"},
	{"_3DES_", "3DES has 64-bit blocks (Sweet32) and is deprecated"},
	{"MD5", "MD5 integrity is broken"},
}

func weakReason(name string) string {
	for _, c := range weakClasses {
		if strings.Contains(name, c.substring) {
			return c.reason
		}
	}
	return ""
}

func cipherSuiteRules() []string {
	all := crypto.All()
	var weak []string
	for _, s := range all {
		if got := weakReason(s.Name); got != s.Weakness() {
			fail(fmt.Errorf("%s: name classifies as %q but the catalogue says %q; update weakClasses", s.Name, got, s.Weakness()))
		}
		if s.Weak() {
			weak = append(weak, s.Name)
		}
	}
	reason := "'weak'"
	for i := len(weakClasses) - 1; i >= 0; i-- {
		reason = fmt.Sprintf("self.contains('%s') ? '%s' : %s", weakClasses[i].substring, weakClasses[i].reason, reason)
	}
	return []string{
		xvalidation("self in "+celList(crypto.Names(all)),
			"self.startsWith('SSL_')"+
				" ? \"'\" + self + \"' is a legacy JSSE name: IANA names start with TLS_ (and every SSL_ suite is refused as weak)\""+
				" : self.matches('^[A-Z0-9]+(-[A-Z0-9]+)+$')"+
				" ? \"'\" + self + \"' looks like an OpenSSL name: write its IANA name instead (openssl ciphers -stdname -V lists both; ECDHE-RSA-AES128-GCM-SHA256 is TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)\""+
				" : \"'\" + self + \"' is not a TLS cipher suite known to OpenSSL, BoringSSL, the JDK or Go: use an IANA name such as TLS_AES_128_GCM_SHA256 or TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\"",
			""),
		xvalidation("!(self in "+celList(weak)+")",
			"self + ' is refused: ' + ("+reason+") + '; choose a forward-secret AEAD suite such as TLS_AES_128_GCM_SHA256 or TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256'",
			""),
	}
}

func tlsRules() []string {
	tls13 := celList(crypto.Names(crypto.Filter(crypto.Suite.TLS13)))
	both := "!has(self.protocols) || !has(self.cipherSuites) || "
	return []string{
		xvalidation(both+"self.protocols.exists(p, p == 'TLSv1.2') || self.cipherSuites.all(s, s in "+tls13+")",
			"'protocols allow only TLSv1.3, but cipherSuites lists TLS 1.2 suites such as ' + self.cipherSuites.filter(s, !(s in "+tls13+"))[0] + ': add TLSv1.2 to protocols or remove those suites'",
			".cipherSuites"),
		xvalidation(both+"self.protocols.exists(p, p == 'TLSv1.3') || self.cipherSuites.all(s, !(s in "+tls13+"))",
			"'protocols allow only TLSv1.2, but cipherSuites lists TLS 1.3 suites such as ' + self.cipherSuites.filter(s, s in "+tls13+")[0] + ': add TLSv1.3 to protocols or remove those suites'",
			".cipherSuites"),
		xvalidation(both+"!self.protocols.exists(p, p == 'TLSv1.2') || self.cipherSuites.exists(s, !(s in "+tls13+"))",
			"'protocols include TLSv1.2 but cipherSuites has no TLS 1.2 suite: add one (e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256) or remove TLSv1.2 from protocols'",
			".protocols"),
		xvalidation(both+"!self.protocols.exists(p, p == 'TLSv1.3') || self.cipherSuites.exists(s, s in "+tls13+")",
			"'protocols include TLSv1.3 but cipherSuites has no TLS 1.3 suite: add one (e.g. TLS_AES_128_GCM_SHA256) or remove TLSv1.3 from protocols'",
			".protocols"),
	}
}

func complianceRules() []string {
	var lines []string
	for _, p := range crypto.Presets() {
		suites := celList(crypto.Names(p.Suites()))
		var protocols []string
		for _, v := range p.Protocols {
			protocols = append(protocols, crypto.ProtocolName(v))
		}
		allProtocols := len(protocols) == 2 // the TLSProtocol enum has two values
		for _, ch := range []string{"clientToNode", "nodeToNode"} {
			guard := fmt.Sprintf("!has(self.compliance) || !('%s' in self.compliance) || !has(self.%s) || !has(self.%s.tls) || ", p.Name, ch, ch)
			tls := "self." + ch + ".tls"
			lines = append(lines, xvalidation(
				guard+"!has("+tls+".cipherSuites) || "+tls+".cipherSuites.all(s, s in "+suites+")",
				fmt.Sprintf("'%s.tls.cipherSuites: ' + %s.cipherSuites.filter(s, !(s in %s))[0] + ' is outside compliance preset %s: keep only suites the preset allows, or remove %s from compliance'", ch, tls, suites, p.Name, p.Name),
				"."+ch+".tls.cipherSuites"))
			if !allProtocols {
				lines = append(lines, xvalidation(
					guard+"!has("+tls+".protocols) || "+tls+".protocols.all(v, v in "+celList(protocols)+")",
					fmt.Sprintf("'%s.tls.protocols: ' + %s.protocols.filter(v, !(v in %s))[0] + ' is outside compliance preset %s, which allows only %s'", ch, tls, celList(protocols), p.Name, strings.Join(protocols, ", ")),
					"."+ch+".tls.protocols"))
			}
		}
	}
	return lines
}

var _ = v1alpha1.PresetNIST // the presets' names are API constants
