/**
 * Whether a statement likes or dislikes what it names, so a later "我讨厌香菜" replaces an earlier
 * "我爱吃香菜" instead of standing beside it. The embeddings cannot tell them apart: a taste and
 * its reversal about the same thing are as close (cosine 0.94–0.95 on e5) as two wordings of one
 * taste, and share its words.
 */

// Liking needs the speaker, or a word that is only said of a taste: "like" alone is as often a
// filler ("like 7pm") or a comparison, and "into" a direction.
const EN_LIKE = /\b(?:(?:i|we)\s+(?:\w+\s+)?(?:love|like|enjoy|adore)|(?:i'm|i am|we're)\s+(?:\w+\s+)?into|fan of|favou?rite|go-to|obsessed with|can't get enough)\b/iu;
// Change words ("no longer", "anymore") are not a stance: "I no longer live in Austin" says
// nothing against Austin.
const EN_DISLIKE =
  /\b(?:hate|hates|hated|dislike|dislikes|detest|can't stand|cannot stand|can't handle|cannot handle|not a fan|not into|not (?:a|much of a) \w+ person|bores? me|boring|the worst|awful|gross(?:es)? me out|freaks? me out|sick of|tired of)\b/iu;
/** A negation right before a liking word ("don't like", "don't really enjoy", "never liked"). */
const EN_NEGATED_LIKE = /\b(?:don't|do not|doesn't|does not|didn't|never|not|no longer|hardly)\s+(?:\w+\s+)?(?:love|like|enjoy|into|a fan)\b/iu;

const ZH_LIKE = /喜欢|(?<![可恋心])爱(?![人好情心])|热爱|迷上|着迷|无.不欢|能吃|离不开|最爱|超爱|钟爱|偏爱/u;
// Not 不行 ("我英语不行" is a skill, not a taste) and not 恐怕.
const ZH_DISLIKE = /讨厌|受不了|[吃喝碰]不了|烦|腻|难用|无聊|反感|恶心|不感冒|(?<!恐)怕|戒了|不碰|不吃了|不喝了/u;
const ZH_NEGATED_LIKE = /[不没](?:[太再大]|怎么|那么|是很)?(?:喜欢|爱|能吃)/u;

/** Whether a statement says it likes something and whether it says it dislikes something ("I like cats and hate dogs": both). */
export function stanceMarks(text: string): { like: boolean; dislike: boolean } {
  const negatedLike = ZH_NEGATED_LIKE.test(text) || EN_NEGATED_LIKE.test(text);
  const dislike = negatedLike || ZH_DISLIKE.test(text) || EN_DISLIKE.test(text);
  const like = !negatedLike && (ZH_LIKE.test(text) || EN_LIKE.test(text));
  return { like, dislike };
}

/** 1 likes, -1 dislikes, 0 says neither (or both). Both lexicons apply: users mix languages. */
export function stanceOf(text: string): -1 | 0 | 1 {
  const { like, dislike } = stanceMarks(text);
  if (like === dislike) return 0;
  return like ? 1 : -1;
}

/**
 * Index tokens that say how, not what: the stance itself, eating and drinking, degree and time.
 * What is left of two statements' tokens names the thing they are about.
 */
const HOW = new Set(
  '吃 喝 看 听 用 玩 做 去 爱 喜欢 不 没 不了 不行 受不了 讨厌 超爱 最爱 热爱 真的 现在 一点 非常 特别 很 太 都 也 就 还 越多 越好 越多越 越多越好 无 不欢 味 味道 那个 这个 东西 一直 以前 已经 完全 实在 有点 最 一 '
    .concat('love like enjoy hate dislik realli just now anymor tbh honestli alway never still big huge super lot much thing stuff time day come i\'v i\'m don\'t can\'t fan favorit favourit worst avoid bore gross')
    .split(/\s+/u)
    .filter(Boolean),
);

const HAN = /^\p{Script=Han}+$/u;

/** The object word written right after `token` (no punctuation between), when there is one. */
function nextObjectWord(side: Side, token: string): string | undefined {
  const next = side.tokens[side.tokens.indexOf(token) + 1];
  return next !== undefined && HAN.test(next) && !HOW.has(next) && side.text.includes(token + next) ? next : undefined;
}

interface Side {
  text: string;
  tokens: readonly string[];
}

/**
 * The tokens two statements share that name what they are about. Chinese compounds are split by
 * the segmenter, so a shared head with different words after it ("科幻小说" / "科幻电影") is two
 * things, not one.
 */
export function sharedObject(a: Side, b: Side): string[] {
  const other = new Set(b.tokens);
  return [...new Set(a.tokens)].filter((t) => {
    if (!other.has(t) || HOW.has(t)) return false;
    if (!HAN.test(t)) return true;
    const afterA = nextObjectWord(a, t);
    const afterB = nextObjectWord(b, t);
    return afterA === undefined || afterB === undefined || afterA === afterB;
  });
}

/** A later statement reverses an earlier one's stance on the same thing. */
export function reversesStance(later: Side, earlier: Side): boolean {
  const a = stanceOf(later.text);
  const b = stanceOf(earlier.text);
  return a !== 0 && b !== 0 && a !== b && sharedObject(later, earlier).length > 0;
}
