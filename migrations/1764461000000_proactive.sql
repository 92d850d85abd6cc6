-- Up Migration
-- Proactive memory (issue #7): reminders, notifications, daily digests. User settings (timezone,
-- digest time, nudge preferences) live in the existing users.timezone and users.settings columns.

-- One row per reminder: the projection of its ReminderWorkflow (the workflow is the single writer
-- after creation; the API inserts the first row so a list right after POST shows it).
CREATE TABLE reminders (
  id             uuid PRIMARY KEY,
  user_id        text NOT NULL REFERENCES users (user_id),
  text           text NOT NULL,
  status         text NOT NULL CHECK (status IN ('scheduled','snoozed','fired','dismissed','cancelled')),
  due_at         timestamptz NOT NULL,
  time_zone      text NOT NULL,
  rrule          text,
  series_start   timestamptz,
  assumed_time   boolean NOT NULL DEFAULT false,
  occurrence     integer NOT NULL DEFAULT 1,
  fired_at       timestamptz,
  snoozed_until  timestamptz,
  dismissed_at   timestamptz,
  source         jsonb NOT NULL DEFAULT '{}'::jsonb,
  workflow_id    text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX reminders_user_status_idx ON reminders (user_id, status, due_at);

-- Everything pushed to the user: fired reminders, digests, nudges. seq orders the SSE stream and
-- lets a reconnecting page resume after Last-Event-ID.
CREATE TABLE notifications (
  id               uuid PRIMARY KEY,
  seq              bigserial UNIQUE,
  user_id          text NOT NULL REFERENCES users (user_id),
  kind             text NOT NULL CHECK (kind IN ('reminder','digest','nudge')),
  title            text NOT NULL,
  body             text NOT NULL,
  reminder_id      uuid,
  data             jsonb NOT NULL DEFAULT '{}'::jsonb,
  idempotency_key  text NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  read_at          timestamptz,
  UNIQUE (user_id, idempotency_key)
);
CREATE INDEX notifications_user_seq_idx ON notifications (user_id, seq);
CREATE INDEX notifications_user_kind_time_idx ON notifications (user_id, kind, created_at);

-- One digest per user and local day; a later run of the same day replaces it.
CREATE TABLE digests (
  user_id       text NOT NULL REFERENCES users (user_id),
  digest_date   date NOT NULL,
  time_zone     text NOT NULL,
  text          text NOT NULL,
  sections      jsonb NOT NULL,
  generated_by  text NOT NULL CHECK (generated_by IN ('llm','template')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, digest_date)
);

-- Down Migration
DROP TABLE digests;
DROP TABLE notifications;
DROP TABLE reminders;
