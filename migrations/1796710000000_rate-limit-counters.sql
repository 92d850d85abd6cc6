-- Up Migration
-- The rate-limit counters of every API process (src/api/postgres-rate-limit-store.ts): one row per
-- (budget, scope, subject) key and fixed window. Several API processes behind a load balancer then
-- spend one budget instead of one each. Unlogged: a crash that loses the counters only restarts
-- the current windows, and every hit is a write that need not reach the WAL.
CREATE UNLOGGED TABLE rate_limit_counters (
  key text PRIMARY KEY,
  hits integer NOT NULL,
  expires_at timestamptz NOT NULL
);
-- The sweep deletes expired windows by this column.
CREATE INDEX rate_limit_counters_expires_idx ON rate_limit_counters (expires_at);

-- Down Migration
DROP TABLE rate_limit_counters;
