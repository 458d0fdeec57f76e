// Package replicatest tests the server's replica mode (server.Replica)
// with several in-process servers on one real PostgreSQL database
// (internal/pgtest). It holds only tests.
package replicatest
