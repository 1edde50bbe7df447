package main

import (
	"crypto/tls"

	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// metricsOptions serves /metrics over HTTPS to callers the API server authenticates (TokenReview)
// and authorizes (SubjectAccessReview on the non-resource URL /metrics, verb get): the metrics
// name every datastore, its profile and which endpoints accept plaintext, which is a map for an
// attacker. secure=false keeps plain, unauthenticated HTTP for a developer's `make run`.
//
// Without certDir controller-runtime serves a self-signed certificate generated at start; with it,
// tls.crt and tls.key from there (a cert-manager Certificate's Secret, for example), reloaded when
// they change.
func metricsOptions(addr, certDir string, secure bool) metricsserver.Options {
	if !secure {
		return metricsserver.Options{BindAddress: addr}
	}
	return metricsserver.Options{
		BindAddress:    addr,
		SecureServing:  true,
		CertDir:        certDir,
		FilterProvider: filters.WithAuthenticationAndAuthorization,
		// HTTP/2 stays off: the rapid-reset attacks (CVE-2023-44487, CVE-2023-39325) cost a
		// scraper nothing to mount and /metrics gains nothing from it.
		TLSOpts: []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"}; c.MinVersion = tls.VersionTLS12 }},
	}
}
