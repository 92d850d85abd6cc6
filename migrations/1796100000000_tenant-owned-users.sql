-- Up Migration

-- Tenants own their users: `user_id` becomes the keyed pseudonym of (tenant, the tenant's user id)
-- and the tenant's own id is kept in `external_id` for export. Existing rows are rekeyed by the
-- application at start (src/adapters/postgres/tenant-rekey.ts): the pseudonym needs SECRET_KEY,
-- which SQL never sees. Until then, `external_id IS NULL` marks a legacy row.
ALTER TABLE users ADD COLUMN external_id text;
CREATE UNIQUE INDEX users_tenant_external_idx ON users (tenant_id, external_id) WHERE external_id IS NOT NULL;

-- Rekeyed users whose Chroma collections (named after the old id) are still to be moved: PostgreSQL
-- commits the rekey first, so a crash before the vectors move leaves this row to finish it later.
CREATE TABLE legacy_user_moves (
  user_id          text PRIMARY KEY,
  old_id           text NOT NULL,
  vectors_moved_at timestamptz
);

-- Every foreign key that carries user_id becomes deferrable, so one transaction can rekey parent
-- and child rows without dropping the constraints.
DO $$
DECLARE c record;
BEGIN
  FOR c IN
    SELECT con.conrelid::regclass AS tbl, con.conname
      FROM pg_constraint con
     WHERE con.contype = 'f'
       AND con.connamespace = current_schema()::regnamespace
       AND EXISTS (SELECT 1 FROM unnest(con.conkey) k JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k WHERE a.attname = 'user_id')
  LOOP
    EXECUTE format('ALTER TABLE %s ALTER CONSTRAINT %I DEFERRABLE INITIALLY IMMEDIATE', c.tbl, c.conname);
  END LOOP;
END $$;

-- Down Migration
DROP TABLE legacy_user_moves;
DROP INDEX users_tenant_external_idx;
ALTER TABLE users DROP COLUMN external_id;
