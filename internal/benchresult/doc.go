// Package benchresult is the contract between benchmark clients and the operator: the
// latency histogram the clients record into, and the Summary they print when a run ends
// (the k6 extension from handleSummary, the HBase JVM driver from its own exit path), which
// the operator reads from the client pod's termination message into DatastoreBenchmark status.
package benchresult
