package cqlbench

import (
	"strings"
	"testing"
)

// The keyspace and the table reach CQL statements as text: a name that would need quoting, or
// that carries more than a name, is refused before anything connects.
func TestOpenRefusesNamesThatAreNotPlainIdentifiers(t *testing.T) {
	for _, o := range []Options{
		{Table: "usertable; DROP TABLE ycsb.usertable"},
		{Table: "UserTable"},
		{Table: "t" + strings.Repeat("x", 48)},
		{Keyspace: "ycsb.other"},
		{Keyspace: "9lives"},
	} {
		o.Hosts, o.FieldCount = []string{"127.0.0.1:1"}, 1
		_, err := Open(o)
		if err == nil || !strings.Contains(err.Error(), "give a CQL name") {
			t.Errorf("keyspace %q, table %q: %v; want the name refused", o.Keyspace, o.Table, err)
		}
	}
}
