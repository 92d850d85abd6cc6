/**
 * Whose statement is it? A sentence that opens with someone else ("My sister…", "A friend of
 * mine…", "我同事…", "我们组长…", "她…") and never comes back to the speaker is about them, not
 * about the user ("My doctor has me off caffeine" and "我妈让我少吃盐" are about the user).
 */
import { EN_FAMILY, ZH_FAMILY } from './lexicon';
import { type Lang, stripFiller } from './text';

const EN_ROLES =
  'friend|friends|colleague|colleagues|coworker|coworkers|co-worker|co-workers|boss|manager|roommate|flatmate|housemate|neighbou?r|neighbou?rs|intern|teacher|doctor|landlord|landlady|cousin|uncle|aunt|nephew|niece|teammate|teammates|lead|client|clients|customer|customers|classmate|classmates|team|company|partner|family|in-laws?';
const EN_FAMILY_WORDS = [...EN_FAMILY].join('|');
const EN_OTHER =
  new RegExp(
    `^(?:(?:my|our|his|her|their)\\s+(?:[\\w'-]+\\s+){0,2}?(?:${EN_FAMILY_WORDS}|${EN_ROLES})(?:'s)?\\b|(?:a|one|some)\\s+(?:friend|colleague|coworker|co-worker|relative|neighbou?r)s?(?:\\s+of\\s+(?:mine|ours))?\\b|(?:he|she|they|he's|she's|they're|his|her|their|everyone|everybody|nobody|people|someone|somebody|the team|the company)\\b)`,
    'iu',
  );
const EN_SELF = /\b(?:i|i'm|i've|i'd|i'll|me|myself)\b/iu;

const ZH_ROLES =
  '妈|爸|表哥|表姐|表弟|表妹|堂哥|堂姐|堂弟|堂妹|叔叔|阿姨|舅舅|姑姑|伯伯|嫂子|姐夫|妹夫|侄子|侄女|外甥|同事|老板|领导|上司|主管|经理|组长|朋友|室友|舍友|邻居|同学|老师|客户|下属|实习生|队友|师傅|闺蜜|哥们|医生';
const ZH_OTHER = new RegExp(`^(?:我的?|我们的?|咱们?的?)?(?:${[...ZH_FAMILY].join('|')}|${ZH_ROLES})|^(?:他|她|它|他们|她们|别人|大家|有人|人家|隔壁)`, 'u');

/** True when the sentence is about someone else and does not come back to the user. */
export function isAboutSomeoneElse(text: string, lang: Lang): boolean {
  const body = stripFiller(text, lang).text.trim();
  const en = EN_OTHER.exec(body);
  if (en) return !EN_SELF.test(body.slice(en[0].length));
  const zh = ZH_OTHER.exec(body);
  if (zh) return !/我/u.test(body.slice(zh[0].length));
  return false;
}
