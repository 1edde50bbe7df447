// Command k6 is k6 with the product's YCSB extension ("k6/x/ycsb") compiled in: the main
// xk6 would generate, written out so the build needs only the Go module proxy.
package main

import (
	k6cmd "go.k6.io/k6/cmd"

	_ "secured.dev/operator/internal/k6ycsb"
)

func main() { k6cmd.Execute() }
