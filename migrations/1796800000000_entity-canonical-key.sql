-- Up Migration
-- The graph route looks entities up by the canonical key of their name (canonicalEntity in
-- src/core/recall/graph.ts: kinship alias, else the trimmed lower-cased name without a possessive)
-- instead of reading the user's whole entity list per recall. The writer
-- (src/adapters/postgres/graph-repository.ts) stores the key with each entity from now on; rows
-- written before get it here, from the same rules in SQL (entity_canonical_key, kept so that
-- test/recall-graph-seeds.int.test.ts can hold it equal to canonicalEntity on every labelled name).
-- lower() and \s under the ICU root collation: JavaScript's toLowerCase and \s are Unicode's, a
-- database created with the C locale would otherwise lower-case ASCII only ("Москва").
-- The alias list is the kinship table as of this migration; the writer's TypeScript is the reference
-- for every row written after it.
CREATE FUNCTION entity_canonical_key(name text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
  WITH alias(word, key) AS (VALUES
    ('mother', 'kin:mother'),
    ('mom', 'kin:mother'),
    ('mum', 'kin:mother'),
    ('mommy', 'kin:mother'),
    ('mama', 'kin:mother'),
    ('妈妈', 'kin:mother'),
    ('母亲', 'kin:mother'),
    ('老妈', 'kin:mother'),
    ('妈', 'kin:mother'),
    ('娘', 'kin:mother'),
    ('father', 'kin:father'),
    ('dad', 'kin:father'),
    ('daddy', 'kin:father'),
    ('papa', 'kin:father'),
    ('爸爸', 'kin:father'),
    ('父亲', 'kin:father'),
    ('老爸', 'kin:father'),
    ('爸', 'kin:father'),
    ('爹', 'kin:father'),
    ('parents', 'kin:parents'),
    ('folks', 'kin:parents'),
    ('父母', 'kin:parents'),
    ('爸妈', 'kin:parents'),
    ('爹妈', 'kin:parents'),
    ('sister', 'kin:sister'),
    ('sis', 'kin:sister'),
    ('姐姐', 'kin:sister'),
    ('妹妹', 'kin:sister'),
    ('姐', 'kin:sister'),
    ('妹', 'kin:sister'),
    ('姊', 'kin:sister'),
    ('brother', 'kin:brother'),
    ('bro', 'kin:brother'),
    ('哥哥', 'kin:brother'),
    ('弟弟', 'kin:brother'),
    ('哥', 'kin:brother'),
    ('弟', 'kin:brother'),
    ('wife', 'kin:wife'),
    ('老婆', 'kin:wife'),
    ('妻子', 'kin:wife'),
    ('太太', 'kin:wife'),
    ('媳妇', 'kin:wife'),
    ('夫人', 'kin:wife'),
    ('husband', 'kin:husband'),
    ('老公', 'kin:husband'),
    ('丈夫', 'kin:husband'),
    ('partner', 'kin:partner'),
    ('spouse', 'kin:partner'),
    ('爱人', 'kin:partner'),
    ('对象', 'kin:partner'),
    ('伴侣', 'kin:partner'),
    ('girlfriend', 'kin:girlfriend'),
    ('gf', 'kin:girlfriend'),
    ('女朋友', 'kin:girlfriend'),
    ('女友', 'kin:girlfriend'),
    ('boyfriend', 'kin:boyfriend'),
    ('bf', 'kin:boyfriend'),
    ('男朋友', 'kin:boyfriend'),
    ('男友', 'kin:boyfriend'),
    ('son', 'kin:son'),
    ('儿子', 'kin:son'),
    ('daughter', 'kin:daughter'),
    ('女儿', 'kin:daughter'),
    ('闺女', 'kin:daughter'),
    ('child', 'kin:child'),
    ('children', 'kin:child'),
    ('kid', 'kin:child'),
    ('kids', 'kin:child'),
    ('baby', 'kin:child'),
    ('孩子', 'kin:child'),
    ('小孩', 'kin:child'),
    ('宝宝', 'kin:child'),
    ('娃', 'kin:child'),
    ('grandmother', 'kin:grandmother'),
    ('grandma', 'kin:grandmother'),
    ('granny', 'kin:grandmother'),
    ('nana', 'kin:grandmother'),
    ('奶奶', 'kin:grandmother'),
    ('外婆', 'kin:grandmother'),
    ('姥姥', 'kin:grandmother'),
    ('grandfather', 'kin:grandfather'),
    ('grandpa', 'kin:grandfather'),
    ('granddad', 'kin:grandfather'),
    ('爷爷', 'kin:grandfather'),
    ('外公', 'kin:grandfather'),
    ('姥爷', 'kin:grandfather'),
    ('family', 'kin:family'),
    ('家人', 'kin:family'),
    ('家里人', 'kin:family')
  ),
  n AS (
    SELECT regexp_replace(regexp_replace(regexp_replace(regexp_replace(lower(name COLLATE "und-x-icu"), '^\s+|\s+$', '', 'g'), '\s+', ' ', 'g'), '^(my|our|your)\s+', ''), '[''’]s$', '') AS n
  ),
  z AS (SELECT n, regexp_replace(n, '^(我们的|我的|我们|咱们|[咱俺我])', '') AS zh FROM n)
  SELECT coalesce((SELECT a.key FROM alias a WHERE a.word = z.n),
                  CASE WHEN z.zh <> '' THEN (SELECT a.key FROM alias a WHERE a.word = z.zh) END,
                  z.n)
    FROM z
$fn$;

ALTER TABLE entities ADD COLUMN canonical_key text;
UPDATE entities SET canonical_key = entity_canonical_key(name);
ALTER TABLE entities ALTER COLUMN canonical_key SET NOT NULL;
CREATE INDEX entities_user_canonical_key_idx ON entities (user_id, canonical_key);

-- Down Migration
DROP INDEX entities_user_canonical_key_idx;
ALTER TABLE entities DROP COLUMN canonical_key;
DROP FUNCTION entity_canonical_key(text);
