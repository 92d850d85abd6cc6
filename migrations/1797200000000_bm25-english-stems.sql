-- Up Migration
-- English BM25 terms are now Porter2 stems ("painted", "painting" → "paint"; src/core/text/stem.ts,
-- analyzeForIndex in src/core/text/tokenize.ts). Postings written before carry the words as
-- written, which a stemmed query no longer asks for, so they are re-posted here with the same
-- stemmer: PostgreSQL's Snowball English stemmer, which test/bm25-stems.int.test.ts checks word
-- for word against ours. The dictionary has no stopword list (english_stem would drop "only" or
-- "very" instead of stemming them, and ours stems every word the tokenizer kept).
CREATE TEXT SEARCH DICTIONARY jarvis_english_stem (TEMPLATE = snowball, Language = english);

-- Re-posts the postings of one user (or of all when p_user is NULL) that were written before
-- stemming. Not idempotent — a stem is not always its own stem ("agreed" → "agre" → "agr") — so it
-- must only run on postings of the old analysis: once here, and in the tests on rows posted the
-- old way. p_stopwords: the English stopwords of the tokenizer (a word whose stem is one keeps its
-- form, as in analyzeForIndex). What the same document posted under two forms of one word
-- ("paint", "painted") becomes one posting with both counts; a document's length (its number of
-- tokens) does not change, nor do the collection statistics, and the df triggers follow the
-- deletes and inserts. messages.doc_length is kept by the message_terms triggers from the tf of
-- inserted and deleted rows, which a merge into an existing posting bypasses, so it is recounted.
CREATE FUNCTION bm25_restem_postings(p_user text, p_stopwords text[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  CREATE TEMP TABLE restem_memory ON COMMIT DROP AS
    SELECT user_id, memory_id, term, tf, doc_length, (ts_lexize('jarvis_english_stem', term))[1] AS stem
      FROM memory_terms WHERE (p_user IS NULL OR user_id = p_user) AND term ~ '^[a-z''][a-z'']{2,}$';
  DELETE FROM restem_memory WHERE stem IS NULL OR stem = term OR stem = '' OR stem = ANY (p_stopwords);
  DELETE FROM memory_terms t USING restem_memory r WHERE t.user_id = r.user_id AND t.term = r.term AND t.memory_id = r.memory_id;
  INSERT INTO memory_terms (user_id, term, memory_id, tf, doc_length)
  SELECT user_id, stem, memory_id, sum(tf), max(doc_length) FROM restem_memory GROUP BY user_id, stem, memory_id
  ON CONFLICT (user_id, term, memory_id) DO UPDATE SET tf = memory_terms.tf + EXCLUDED.tf;

  CREATE TEMP TABLE restem_episode ON COMMIT DROP AS
    SELECT user_id, episode_id, term, tf, doc_length, (ts_lexize('jarvis_english_stem', term))[1] AS stem
      FROM episode_terms WHERE (p_user IS NULL OR user_id = p_user) AND term ~ '^[a-z''][a-z'']{2,}$';
  DELETE FROM restem_episode WHERE stem IS NULL OR stem = term OR stem = '' OR stem = ANY (p_stopwords);
  DELETE FROM episode_terms t USING restem_episode r WHERE t.user_id = r.user_id AND t.term = r.term AND t.episode_id = r.episode_id;
  INSERT INTO episode_terms (user_id, term, episode_id, tf, doc_length)
  SELECT user_id, stem, episode_id, sum(tf), max(doc_length) FROM restem_episode GROUP BY user_id, stem, episode_id
  ON CONFLICT (user_id, term, episode_id) DO UPDATE SET tf = episode_terms.tf + EXCLUDED.tf;

  CREATE TEMP TABLE restem_message ON COMMIT DROP AS
    SELECT user_id, conversation_id, message_id, term, tf, doc_length, (ts_lexize('jarvis_english_stem', term))[1] AS stem
      FROM message_terms WHERE (p_user IS NULL OR user_id = p_user) AND term ~ '^[a-z''][a-z'']{2,}$';
  DELETE FROM restem_message WHERE stem IS NULL OR stem = term OR stem = '' OR stem = ANY (p_stopwords);
  DELETE FROM message_terms t USING restem_message r
   WHERE t.user_id = r.user_id AND t.term = r.term AND t.conversation_id = r.conversation_id AND t.message_id = r.message_id;
  INSERT INTO message_terms (user_id, term, conversation_id, message_id, tf, doc_length)
  SELECT user_id, stem, conversation_id, message_id, sum(tf), max(doc_length) FROM restem_message
   GROUP BY user_id, stem, conversation_id, message_id
  ON CONFLICT (user_id, term, conversation_id, message_id) DO UPDATE SET tf = message_terms.tf + EXCLUDED.tf;
  UPDATE messages m SET doc_length = t.len
    FROM (SELECT p.user_id, p.conversation_id, p.message_id, sum(p.tf)::int AS len
            FROM message_terms p
            JOIN (SELECT DISTINCT user_id, conversation_id, message_id FROM restem_message) r USING (user_id, conversation_id, message_id)
           GROUP BY 1, 2, 3) t
   WHERE m.user_id = t.user_id AND m.conversation_id = t.conversation_id AND m.message_id = t.message_id AND m.doc_length <> t.len;
  UPDATE message_index_stats s SET doc_count = c.docs, total_length = c.len
    FROM (SELECT user_id, count(*) FILTER (WHERE doc_length > 0) AS docs, COALESCE(sum(doc_length), 0) AS len
            FROM messages WHERE user_id IN (SELECT DISTINCT user_id FROM restem_message) GROUP BY user_id) c
   WHERE s.user_id = c.user_id;
END
$$;

-- The tokenizer's English stopwords (STOPWORDS in src/core/text/tokenize.ts; a unit test keeps
-- this list equal to it).
SELECT bm25_restem_postings(NULL, ARRAY[
  'the', 'a', 'an', 'is', 'are', 'was', 'were', 'be', 'been', 'being', 'am', 'to', 'of', 'and', 'or',
  'in', 'on', 'at', 'for', 'with', 'by', 'from', 'as', 'i', 'you', 'he', 'she', 'it', 'we', 'they',
  'my', 'me', 'your', 'our', 'his', 'her', 'its', 'their', 'this', 'that', 'these', 'those', 'do',
  'does', 'did', 'have', 'has', 'had', 'will', 'would', 'can', 'could', 'should', 'so', 'than',
  'then', 'there', 'what', 'which', 'who', 'whom', 'if', 'but', 'about', 'into', 'just', 'also',
  'i''m', 'it''s', 'don''t'
]::text[]);

-- Down Migration
-- Stems cannot be turned back into the words they came from; the postings stay stemmed.
DROP FUNCTION bm25_restem_postings(text, text[]);
DROP TEXT SEARCH DICTIONARY jarvis_english_stem;
