// Package controllers holds one reconciler per kind of the datastore.secured.dev API. Each is
// thin and follows one skeleton: fetch the object, run its phases over a scope that carries
// everything read during the pass, and write status once at the end, with observedGeneration,
// only when it changed, so that a steady state makes no API writes. Desired objects come from
// the pure builders under internal/render; conditions are metav1.Conditions; every change the
// operator makes is also an event.
package controllers
