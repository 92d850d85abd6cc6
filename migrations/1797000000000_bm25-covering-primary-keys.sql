-- Up Migration
-- BM25 gives its best candidates their exact score by probing, per candidate and per cut query
-- term, that term's posting of that document (src/adapters/postgres/bm25-sql.ts, `probed`). The
-- primary key (user_id, term, document) answers that probe in one descent, but it did not carry
-- tf and doc_length, so the planner preferred an index-only scan of the impact index
-- (user_id, term, impact DESC, document) INCLUDE (tf, doc_length), where the document is not a
-- bound column: every probe walked the term's whole range. On 10k memories of a never-analyzed
-- user a query with four common terms spent 62 ms in 400 such probes (0.16 ms each) against
-- 4 ms as primary-key probes. The primary keys now carry what scoring reads, so the probe is an
-- index-only descent of the key whatever the statistics say; no index is added, so writes cost
-- what they did.
CREATE UNIQUE INDEX memory_terms_pkey_covering ON memory_terms (user_id, term, memory_id) INCLUDE (tf, doc_length);
ALTER TABLE memory_terms DROP CONSTRAINT memory_terms_pkey, ADD CONSTRAINT memory_terms_pkey PRIMARY KEY USING INDEX memory_terms_pkey_covering;
CREATE UNIQUE INDEX message_terms_pkey_covering ON message_terms (user_id, term, conversation_id, message_id) INCLUDE (tf, doc_length);
ALTER TABLE message_terms DROP CONSTRAINT message_terms_pkey, ADD CONSTRAINT message_terms_pkey PRIMARY KEY USING INDEX message_terms_pkey_covering;
CREATE UNIQUE INDEX episode_terms_pkey_covering ON episode_terms (user_id, term, episode_id) INCLUDE (tf, doc_length);
ALTER TABLE episode_terms DROP CONSTRAINT episode_terms_pkey, ADD CONSTRAINT episode_terms_pkey PRIMARY KEY USING INDEX episode_terms_pkey_covering;

-- Down Migration
CREATE UNIQUE INDEX episode_terms_pkey_plain ON episode_terms (user_id, term, episode_id);
ALTER TABLE episode_terms DROP CONSTRAINT episode_terms_pkey, ADD CONSTRAINT episode_terms_pkey PRIMARY KEY USING INDEX episode_terms_pkey_plain;
CREATE UNIQUE INDEX message_terms_pkey_plain ON message_terms (user_id, term, conversation_id, message_id);
ALTER TABLE message_terms DROP CONSTRAINT message_terms_pkey, ADD CONSTRAINT message_terms_pkey PRIMARY KEY USING INDEX message_terms_pkey_plain;
CREATE UNIQUE INDEX memory_terms_pkey_plain ON memory_terms (user_id, term, memory_id);
ALTER TABLE memory_terms DROP CONSTRAINT memory_terms_pkey, ADD CONSTRAINT memory_terms_pkey PRIMARY KEY USING INDEX memory_terms_pkey_plain;
