// Package store is the end-to-end test of chaos against a real PostgreSQL server: Temporal
// on Postgres, the results database and schedules (its tests are package store_test).
package store
