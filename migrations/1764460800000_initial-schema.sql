-- Up Migration

-- A user belongs to exactly one tenant; an API key of another tenant never reaches them.
CREATE TABLE users (
  user_id     text PRIMARY KEY,
  tenant_id   text NOT NULL,
  timezone    text NOT NULL DEFAULT 'UTC',
  settings    jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE memories (
  id                    uuid PRIMARY KEY,
  user_id               text NOT NULL REFERENCES users (user_id),
  text                  text NOT NULL,
  normalized_text       text NOT NULL,
  type                  text NOT NULL CHECK (type IN ('fact','preference','goal','pain_point','event','instruction','decision','assistant_contribution')),
  status                text NOT NULL DEFAULT 'active' CHECK (status IN ('active','superseded','expired','archived')),
  scope                 text NOT NULL DEFAULT 'global' CHECK (scope IN ('global','task')),
  confidence            real NOT NULL CHECK (confidence BETWEEN 0 AND 1),
  importance            real NOT NULL CHECK (importance BETWEEN 0 AND 1),
  importance_level      text NOT NULL CHECK (importance_level IN ('low','medium','high','critical')),
  importance_components jsonb NOT NULL DEFAULT '{}'::jsonb,
  frequency_count       integer NOT NULL DEFAULT 1,
  decay_score           real NOT NULL DEFAULT 1,
  emotion_tags          text[] NOT NULL DEFAULT '{}',
  associated_topics     text[] NOT NULL DEFAULT '{}',
  keywords              text[] NOT NULL DEFAULT '{}',
  source                jsonb NOT NULL DEFAULT '{}'::jsonb,
  metadata              jsonb NOT NULL DEFAULT '{}'::jsonb,
  doc_length            integer NOT NULL DEFAULT 0,
  created_at            timestamptz NOT NULL,
  updated_at            timestamptz NOT NULL,
  last_recalled_at      timestamptz,
  last_accessed_at      timestamptz NOT NULL,
  expires_at            timestamptz,
  archived_at           timestamptz,
  supersedes            uuid REFERENCES memories (id),
  superseded_by         uuid REFERENCES memories (id)
);
CREATE INDEX memories_user_status_idx ON memories (user_id, status, type);
CREATE INDEX memories_user_recent_idx ON memories (user_id, updated_at DESC) WHERE status = 'active';
CREATE INDEX memories_user_importance_idx ON memories (user_id, importance DESC, updated_at DESC) WHERE status = 'active';
CREATE INDEX memories_user_normalized_idx ON memories (user_id, normalized_text) WHERE status = 'active';
CREATE INDEX memories_status_expiry_idx ON memories (expires_at) WHERE status = 'active' AND expires_at IS NOT NULL;

-- BM25 inverted index, maintained on write: only active memories have postings, so a query never
-- needs to filter dead rows and document frequencies stay true.
CREATE TABLE memory_terms (
  user_id   text NOT NULL,
  term      text NOT NULL,
  memory_id uuid NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
  tf        integer NOT NULL,
  PRIMARY KEY (user_id, term, memory_id)
);
CREATE INDEX memory_terms_memory_idx ON memory_terms (memory_id);

CREATE TABLE user_index_stats (
  user_id      text PRIMARY KEY,
  doc_count    integer NOT NULL DEFAULT 0,
  total_length bigint NOT NULL DEFAULT 0
);

-- Every decision about a memory, with the workflow that took it: the audit trail.
CREATE TABLE memory_events (
  id               bigserial PRIMARY KEY,
  user_id          text NOT NULL,
  memory_id        uuid,
  action           text NOT NULL,
  reason           text NOT NULL,
  before           jsonb,
  after            jsonb,
  workflow_id      text,
  run_id           text,
  conversation_id  text,
  message_ids      text[] NOT NULL DEFAULT '{}',
  actor            text NOT NULL,
  idempotency_key  text,
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX memory_events_memory_idx ON memory_events (user_id, memory_id, id);
-- Idempotency is per user: two users saying the same thing in same-named conversations are distinct.
CREATE UNIQUE INDEX memory_events_idempotency_idx ON memory_events (user_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

-- Vector writes that PostgreSQL committed but Chroma has not confirmed yet (transactional outbox).
CREATE TABLE vector_outbox (
  memory_id    uuid PRIMARY KEY,
  user_id      text NOT NULL,
  op           text NOT NULL CHECK (op IN ('upsert','delete')),
  enqueued_at  timestamptz NOT NULL DEFAULT now(),
  attempts     integer NOT NULL DEFAULT 0,
  last_error   text
);

CREATE TABLE conversations (
  user_id          text NOT NULL REFERENCES users (user_id),
  conversation_id  text NOT NULL,
  started_at       timestamptz NOT NULL,
  last_message_at  timestamptz NOT NULL,
  ended_at         timestamptz,
  PRIMARY KEY (user_id, conversation_id)
);

CREATE TABLE messages (
  user_id          text NOT NULL,
  conversation_id  text NOT NULL,
  message_id       text NOT NULL,
  seq              bigserial,
  role             text NOT NULL CHECK (role IN ('user','assistant')),
  content          text NOT NULL,
  said_at          timestamptz NOT NULL,
  received_at      timestamptz NOT NULL DEFAULT now(),
  truncated        boolean NOT NULL DEFAULT false,
  PRIMARY KEY (user_id, conversation_id, message_id),
  FOREIGN KEY (user_id, conversation_id) REFERENCES conversations (user_id, conversation_id)
);
CREATE INDEX messages_user_time_idx ON messages (user_id, said_at);

CREATE TABLE message_terms (
  user_id          text NOT NULL,
  term             text NOT NULL,
  conversation_id  text NOT NULL,
  message_id       text NOT NULL,
  tf               integer NOT NULL,
  PRIMARY KEY (user_id, term, conversation_id, message_id)
);

-- Seed 003's graph: entities and relations per user, linked to the memories they came from.
CREATE TABLE entities (
  id          uuid PRIMARY KEY,
  user_id     text NOT NULL,
  name        text NOT NULL,
  kind        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (user_id, kind, name)
);
CREATE TABLE memory_entities (
  memory_id  uuid NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
  entity_id  uuid NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
  PRIMARY KEY (memory_id, entity_id)
);
CREATE TABLE relations (
  user_id     text NOT NULL,
  source_id   uuid NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
  relation    text NOT NULL,
  target_id   uuid NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
  memory_id   uuid NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, source_id, relation, target_id, memory_id)
);

-- Down Migration
DROP TABLE relations;
DROP TABLE memory_entities;
DROP TABLE entities;
DROP TABLE message_terms;
DROP TABLE messages;
DROP TABLE conversations;
DROP TABLE vector_outbox;
DROP TABLE memory_events;
DROP TABLE user_index_stats;
DROP TABLE memory_terms;
DROP TABLE memories;
DROP TABLE users;
