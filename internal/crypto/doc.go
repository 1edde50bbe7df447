// Package crypto is the operator's vocabulary for wire encryption: a catalogue of every TLS
// cipher suite that OpenSSL, BoringSSL, the JDK (SunJSSE) or Go know, the ordinal security rank
// the operator assigns to a suite and to a whole encryption profile, the compliance presets a
// profile can be held to, and the resolution of a profile reference plus inline overrides into
// one effective profile.
//
// Every other part of the operator (CRD validation, the Cassandra and HBase renderers, the wire
// prober, the benchmark client, the study) speaks in the names and ranks defined here, so the
// catalogue is deliberately plain data with the derived properties computed from IANA names by
// one parser (see parse.go) and cross-checked against the real libraries by the tests.
package crypto
