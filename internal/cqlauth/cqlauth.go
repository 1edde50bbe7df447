// Package cqlauth closes a Cassandra cluster that runs PasswordAuthenticator and
// CassandraAuthorizer: it replaces the well-known default superuser (cassandra/cassandra, which
// Cassandra creates at first start) with a generated one, replicates the roles across the
// cluster, and creates a role for benchmark clients that may use one keyspace and nothing else.
package cqlauth

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
)

// Login is a CQL role's name and password.
type Login struct{ Username, Password string }

// DefaultSuperuser is the role Cassandra creates when it first starts with PasswordAuthenticator.
var DefaultSuperuser = Login{Username: "cassandra", Password: "cassandra"}

// Plan is what Bootstrap makes true.
type Plan struct {
	Superuser Login
	Client    Login
	// Keyspace the client may create tables in, read and write: the benchmark's (ycsb).
	Keyspace string
	// Datacenter and ReplicationFactor of system_auth (the roles) and of Keyspace: the roles
	// must survive a node's restart, or every login fails during a rolling change.
	Datacenter        string
	ReplicationFactor int
	// Identities are client-certificate identities to map to roles (ADD IDENTITY), for nodes
	// that authenticate clients by certificate (MutualTlsAuthenticator).
	Identities []Identity
	// CertificateLogins: the nodes authenticate by certificate already. Roles then take no
	// password (the role manager refuses the option), and the certificate Connect presents,
	// not the login it is given, decides who the session is.
	CertificateLogins bool
}

// Identity maps a client certificate's SPIFFE ID to the role it logs in as.
type Identity struct{ ID, Role string }

// Connect opens a session to the cluster as login.
type Connect func(ctx context.Context, login Login) (*gocql.Session, error)

// Outcome says what Bootstrap found and did.
type Outcome struct {
	// Replaced: the default superuser was still there and is gone now.
	Replaced bool
}

var (
	identifier = regexp.MustCompile(`^[a-z][a-z0-9_]{0,47}$`)
	// A SPIFFE ID as the operator makes them: a trust domain and a path of plain segments.
	spiffeID   = regexp.MustCompile(`^spiffe://[a-z0-9.-]+(/[A-Za-z0-9._-]+)+$`)
	datacenter = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_-]{0,47}$`)
)

// validate keeps every name a plain CQL identifier (or, for the datacenter, what
// cassandra-rackdc.properties accepts): they are written into statements unquoted.
func (p Plan) validate() error {
	for what, v := range map[string]string{"superuser": p.Superuser.Username, "client": p.Client.Username, "keyspace": p.Keyspace} {
		if !identifier.MatchString(v) {
			return fmt.Errorf("%s %q is not a CQL identifier (lower-case letters, digits, _)", what, v)
		}
	}
	if !datacenter.MatchString(p.Datacenter) {
		return fmt.Errorf("datacenter %q is not a datacenter name", p.Datacenter)
	}
	if p.Superuser.Password == "" || p.Client.Password == "" {
		return errors.New("a generated login has an empty password")
	}
	if p.Superuser.Username == DefaultSuperuser.Username || p.Client.Username == DefaultSuperuser.Username {
		return fmt.Errorf("%q is the default superuser, which Bootstrap removes", DefaultSuperuser.Username)
	}
	for _, id := range p.Identities {
		if !spiffeID.MatchString(id.ID) || len(id.ID) > 2048 {
			return fmt.Errorf("identity %q is not a SPIFFE ID (spiffe://<trust domain>/<path>, letters, digits, '.', '-', '_')", id.ID)
		}
		if id.Role != p.Superuser.Username && id.Role != p.Client.Username {
			return fmt.Errorf("identity %s maps to role %q, which is neither the superuser's nor the client's", id.ID, id.Role)
		}
	}
	if p.ReplicationFactor < 1 {
		return fmt.Errorf("replication factor %d: at least 1", p.ReplicationFactor)
	}
	return nil
}

// Bootstrap makes the plan true and may run any number of times: when the generated superuser
// can log in, it only checks the rest; otherwise it logs in as the default superuser, creates
// the generated one and carries on as it. Every node must be up: role changes are written at
// QUORUM.
func Bootstrap(ctx context.Context, connect Connect, p Plan) (Outcome, error) {
	if err := p.validate(); err != nil {
		return Outcome{}, err
	}
	var out Outcome
	admin, err := connect(ctx, p.Superuser)
	if err != nil {
		first := err
		def, err := connect(ctx, DefaultSuperuser)
		if err != nil {
			return out, fmt.Errorf("neither the generated superuser (%v) nor Cassandra's default one (%v) can log in; Cassandra creates the default one about 10 s after the first node starts", first, err)
		}
		err = run(ctx, def, replication("system_auth", "NetworkTopologyStrategy", p),
			fmt.Sprintf("CREATE ROLE IF NOT EXISTS %s WITH SUPERUSER = true AND LOGIN = true AND PASSWORD = %s", p.Superuser.Username, quote(p.Superuser.Password)))
		def.Close()
		if err != nil {
			return out, err
		}
		if admin, err = connect(ctx, p.Superuser); err != nil {
			return out, fmt.Errorf("the generated superuser was created but cannot log in: %w", err)
		}
	}
	defer admin.Close()
	exists, err := roleExists(ctx, admin, DefaultSuperuser.Username)
	if err != nil {
		return out, err
	}
	stmts := []string{replication("system_auth", "NetworkTopologyStrategy", p)}
	if exists {
		stmts = append(stmts, "DROP ROLE IF EXISTS "+DefaultSuperuser.Username)
		out.Replaced = true
	}
	// SimpleStrategy, as the benchmark's own CREATE KEYSPACE IF NOT EXISTS says.
	stmts = append(stmts,
		fmt.Sprintf("CREATE KEYSPACE IF NOT EXISTS %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': %d}", p.Keyspace, p.ReplicationFactor))
	if p.CertificateLogins {
		stmts = append(stmts, fmt.Sprintf("CREATE ROLE IF NOT EXISTS %s WITH LOGIN = true", p.Client.Username))
	} else {
		stmts = append(stmts,
			fmt.Sprintf("CREATE ROLE IF NOT EXISTS %s WITH LOGIN = true AND PASSWORD = %s", p.Client.Username, quote(p.Client.Password)),
			fmt.Sprintf("ALTER ROLE %s WITH PASSWORD = %s", p.Client.Username, quote(p.Client.Password)))
	}
	for _, perm := range []string{"CREATE", "ALTER", "DROP", "SELECT", "MODIFY"} {
		stmts = append(stmts, fmt.Sprintf("GRANT %s ON KEYSPACE %s TO %s", perm, p.Keyspace, p.Client.Username))
	}
	for _, id := range p.Identities {
		stmts = append(stmts, fmt.Sprintf("ADD IDENTITY IF NOT EXISTS %s TO ROLE %s", quote(id.ID), quote(id.Role)))
	}
	return out, run(ctx, admin, stmts...)
}

func replication(keyspace, class string, p Plan) string {
	return fmt.Sprintf("ALTER KEYSPACE %s WITH replication = {'class': '%s', '%s': %d}", keyspace, class, p.Datacenter, p.ReplicationFactor)
}

func roleExists(ctx context.Context, s *gocql.Session, role string) (bool, error) {
	var name string
	err := s.Query("SELECT role FROM system_auth.roles WHERE role = ?", role).Consistency(gocql.Quorum).ScanContext(ctx, &name)
	if errors.Is(err, gocql.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading system_auth.roles: %w", err)
	}
	return true, nil
}

// run executes the statements in order; a password never appears in the error.
func run(ctx context.Context, s *gocql.Session, stmts ...string) error {
	for _, stmt := range stmts {
		if err := s.Query(stmt).Consistency(gocql.Quorum).ExecContext(ctx); err != nil {
			return fmt.Errorf("%s: %w", redact(stmt), err)
		}
	}
	return nil
}

// quote makes a CQL string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func redact(stmt string) string {
	if i := strings.Index(stmt, "PASSWORD = "); i >= 0 {
		return stmt[:i] + "PASSWORD = <redacted>"
	}
	return stmt
}
