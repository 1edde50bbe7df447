package controllers

import (
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// requestsFor turns listed objects into reconcile requests, keeping those keep accepts (all
// when keep is nil). Watches on related kinds (profiles, nodes) map through it.
func requestsFor[T any, P interface {
	*T
	client.Object
}](items []T, keep func(P) bool) []reconcile.Request {
	var reqs []reconcile.Request
	for i := range items {
		o := P(&items[i])
		if keep == nil || keep(o) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
		}
	}
	return reqs
}
