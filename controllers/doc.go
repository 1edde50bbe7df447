// Package controllers holds one reconciler per kind of the datastore.secured.dev API. All four
// follow one skeleton (reconcile.go): fetch the object, run its phases in order over a scope
// that carries everything read during the pass, then write status once, only when it changed,
// with observedGeneration only after a successful pass, so that a steady state makes no API
// writes. A SecuredDatastore's phases are the same for every engine; what differs between
// Cassandra and HBase sits behind the engine interface (engine.go). Decisions are pure
// functions in internal packages (status, verify, benchrun, study), desired objects come from
// the builders under internal/render, conditions are metav1.Conditions with API-constant
// reasons, and every change the operator makes is also an event. docs/ARCHITECTURE.md draws
// the whole path.
package controllers
