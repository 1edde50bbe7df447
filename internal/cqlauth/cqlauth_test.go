package cqlauth

import (
	"context"
	"errors"
	"strings"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
)

func validPlan() Plan {
	return Plan{Superuser: Login{"sdo_admin", "su-secret"}, Client: Login{"sdo_client", "client-secret"}, Keyspace: "ycsb", Datacenter: "dc1", ReplicationFactor: 3,
		Identities: []Identity{{"spiffe://cluster.local/ns/default/secureddatastore/orders/role/sdo_client", "sdo_client"}}}
}

// A plan whose names would not be plain CQL identifiers never reaches a statement.
func TestPlanRefusesWhatCouldNotBeAnIdentifier(t *testing.T) {
	for name, mutate := range map[string]func(*Plan){
		"quoted superuser":              func(p *Plan) { p.Superuser.Username = `x" WITH SUPERUSER` },
		"keyspace statement":            func(p *Plan) { p.Keyspace = "ycsb; DROP KEYSPACE system_auth" },
		"datacenter quote":              func(p *Plan) { p.Datacenter = "dc1': 3, 'x" },
		"default superuser":             func(p *Plan) { p.Superuser.Username = "cassandra" },
		"empty password":                func(p *Plan) { p.Client.Password = "" },
		"no replicas":                   func(p *Plan) { p.ReplicationFactor = 0 },
		"quoted identity":               func(p *Plan) { p.Identities[0].ID = "spiffe://cluster.local/x' TO ROLE 'sdo_admin" },
		"not a SPIFFE ID":               func(p *Plan) { p.Identities[0].ID = "https://cluster.local/x" },
		"identity of a stranger's role": func(p *Plan) { p.Identities[0].Role = "cassandra" },
	} {
		p := validPlan()
		mutate(&p)
		called := false
		_, err := Bootstrap(context.Background(), func(context.Context, Login) (*gocql.Session, error) {
			called = true
			return nil, errors.New("unreachable")
		}, p)
		if err == nil || called {
			t.Errorf("%s: %v (connected: %v); want a refusal before any connection", name, err, called)
		}
	}
}

// Passwords are quoted as CQL literals and never appear in an error.
func TestPasswordsAreQuotedAndRedacted(t *testing.T) {
	if got := quote("it's"); got != "'it''s'" {
		t.Errorf("quote = %s", got)
	}
	stmt := "CREATE ROLE IF NOT EXISTS sdo_admin WITH SUPERUSER = true AND LOGIN = true AND PASSWORD = " + quote("hunter2")
	if got := redact(stmt); strings.Contains(got, "hunter2") || !strings.HasSuffix(got, "PASSWORD = <redacted>") {
		t.Errorf("redact = %s", got)
	}
	p := validPlan()
	_, err := Bootstrap(context.Background(), func(context.Context, Login) (*gocql.Session, error) {
		return nil, errors.New("connection refused")
	}, p)
	if err == nil || strings.Contains(err.Error(), p.Superuser.Password) || strings.Contains(err.Error(), p.Client.Password) {
		t.Errorf("error %v: want a failure that names no password", err)
	}
}
