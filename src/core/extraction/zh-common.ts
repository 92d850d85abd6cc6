/**
 * Regex building blocks for Chinese clause rules. A clause may open with adverbials
 * ("其实", "平时"), then the first person (我/我们, often dropped in Chinese), then adverbs.
 * A clause that opens with someone else (他, 你, 同事) never matches a first-person rule.
 */

/** Leading adverbials allowed before the subject. */
export const PRE =
  '(?:(?:可能|好像|也许|大概|或许|估计|似乎|应该|今天|昨天|昨晚|今晚|明天|刚才|刚刚|其实|说实话|老实说|平时|平常|一般|通常|现在|目前|最近|今年|周末|晚上|早上|工作中|工作上|生活中|本来|确实|真的|也|还|都|就|另外|而且|但是|不过|所以|因为)[，,\\s]*)*';
/** First person, singular or plural. */
export const I = '(?:我们家|我家|我们|我|咱们|咱|本人)';
/** Adverbs between subject and predicate. */
export const ADV =
  '(?:也|还|都|就|真的|其实|一直|一般|平时|平常|通常|本来|特别|非常|很|挺|超|最|比较|蛮|确实|现在|目前|已经|从小|从来|向来|超级|实在|真|相当|十分|尤其|主要|基本上?|自己|有点|有些|今天|昨天|昨晚|今晚|明天|刚才|刚刚|最近|这几天|这两天)*';
/** Explicit first person at the start of the clause. */
export const SELF = `^${PRE}${I}${ADV}`;
/** First person or a dropped subject. */
export const SELF_OPT = `^${PRE}(?:${I})?${ADV}`;

/** Standing markers that make an instruction permanent. */
export const STANDING = '(?:以后|今后|往后|之后|从现在(?:开始|起)|从今(?:以后|往后|天起)|下次|每次|永远|一律|始终|以后都)';

/** Chinese numbers for counts ("两个孩子", "一只猫"). */
export const COUNT = '(?:[\\d一二两三四五六七八九十几]+)';

/** Compiles a Chinese rule pattern (Unicode). */
export function zh(source: string): RegExp {
  return new RegExp(source, 'u');
}
