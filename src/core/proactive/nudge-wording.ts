/**
 * Nudges in the voice of a person who remembers, not of a system alert: short, specific, one
 * question at the end, in the language the subject was said in. Several phrasings per trigger so
 * a user does not get the same sentence every day; the variant is picked by a deterministic draw.
 */
import type { NudgeTrigger } from './nudge-triggers';

export interface NudgeMessage {
  title: string;
  body: string;
  lang: 'zh' | 'en';
}

const CJK = /[\u3400-\u9fff]/u;

/** zh when the text has any CJK character (the user said it in Chinese), else en. */
export function languageOf(text: string): 'zh' | 'en' {
  return CJK.test(text) ? 'zh' : 'en';
}

/** The subject as it would be quoted in speech: no "I'm annoyed that" lead-in, no final punctuation, not too long. */
export function quoteSubject(text: string, max = 36): string {
  let s = text
    .trim()
    .replace(/^(?:最(?:近|让我)?(?:困扰|烦|头疼)我?的(?:是|事情?是)|我的目标是|我(?:想|要|希望|打算|计划)在?)\s*/u, '')
    .replace(/^(?:my goal is (?:to )?|i (?:want|plan|hope|need) to |i'?m (?:annoyed|frustrated|bothered) (?:that|by) )/iu, '')
    .replace(/(?<![。.!！?？,，;；~\s])[。.!！?？,，;；~\s]+$/u, '');
  const chars = [...s];
  if (chars.length > max) s = `${chars.slice(0, max - 1).join('')}…`;
  return s;
}

function inMinutes(minutes: number, lang: 'zh' | 'en'): string {
  if (minutes >= 60) {
    const h = Math.floor(minutes / 60);
    const m = minutes % 60;
    if (lang === 'zh') return m === 0 ? `${h} 小时` : `${h} 小时 ${m} 分钟`;
    return m === 0 ? `${h} hour${h > 1 ? 's' : ''}` : `${h} h ${m} min`;
  }
  return lang === 'zh' ? `${minutes} 分钟` : `${minutes} minute${minutes === 1 ? '' : 's'}`;
}

type Phrase = (s: string, t: NudgeTrigger) => string;

const PHRASES: Record<NudgeTrigger['kind'], Record<'zh' | 'en', Phrase[]>> = {
  pain_point_recurring: {
    zh: [
      (s) => `我注意到「${s}」这件事最近又出现了好几次。要不要一起想想，怎么把它彻底解决掉？`,
      (s) => `「${s}」好像一直在困扰你。需要我帮你把可能的原因理一理吗？`,
      (s) => `又看到你提到「${s}」了。要不要今天花十分钟，我们把它拆开看看？`,
    ],
    en: [
      (s) => `I noticed "${s}" has come up a few times lately. Want to figure out a way to fix it for good?`,
      (s) => `"${s}" seems to keep bothering you. Should I help you sort out what might be behind it?`,
      (s) => `You've mentioned "${s}" again. Want to take ten minutes today and pick it apart together?`,
    ],
  },
  goal_deadline: {
    zh: [
      (s, t) => (t.daysLeft === 0 ? `今天就是「${s}」的期限了，进展怎么样？需要我帮忙收个尾吗？` : `离「${s}」的期限还有 ${t.daysLeft} 天了，进展还顺利吗？要不要我帮你把剩下的步骤拆一拆？`),
      (s, t) => (t.daysLeft === 0 ? `「${s}」今天到期。还差哪一步？我可以陪你过一遍。` : `「${s}」还剩 ${t.daysLeft} 天。你觉得时间够吗？需要的话我们一起排个计划。`),
    ],
    en: [
      (s, t) => (t.daysLeft === 0 ? `Today is the deadline for "${s}". How's it going — want help wrapping it up?` : `Only ${t.daysLeft} day${t.daysLeft === 1 ? '' : 's'} left for "${s}". How's it going — want help breaking down what's left?`),
      (s, t) => (t.daysLeft === 0 ? `"${s}" is due today. What's still missing? Happy to walk through it with you.` : `"${s}" is due in ${t.daysLeft} day${t.daysLeft === 1 ? '' : 's'}. Does that feel doable? We could plan the rest together.`),
    ],
  },
  pain_point_recalled: {
    zh: [
      (s) => `刚才又聊到了「${s}」。这件事现在好些了吗？要不要我们找个时间把它解决掉？`,
      (s) => `说起来，「${s}」还在困扰你吗？需要的话我可以帮你理一理思路。`,
    ],
    en: [
      (s) => `We just touched on "${s}" again. Is it any better now? Want to find a time to sort it out?`,
      (s) => `By the way, is "${s}" still bothering you? I can help you think it through.`,
    ],
  },
  goal_recalled: {
    zh: [
      (s) => `刚才提到了「${s}」，这个目标最近进展怎么样？有需要我帮忙的地方吗？`,
      (s) => `还记得你想「${s}」。现在走到哪一步了？要不要一起定个下一步？`,
    ],
    en: [
      (s) => `That reminded me of your goal: "${s}". How is it going — anything I can help with?`,
      (s) => `Your goal "${s}" — where are you with it? Shall we pick a next step together?`,
    ],
  },
  reminder_upcoming: {
    zh: [
      (s, t) => `提前说一声：再过 ${inMinutes(t.minutesLeft ?? 0, 'zh')}就是「${s}」了，需要提前准备点什么吗？`,
      (s, t) => `「${s}」还有 ${inMinutes(t.minutesLeft ?? 0, 'zh')}。要我先帮你把要带的、要说的列一下吗？`,
    ],
    en: [
      (s, t) => `Heads-up: "${s}" is coming up in ${inMinutes(t.minutesLeft ?? 0, 'en')}. Anything you'd like to prepare?`,
      (s, t) => `"${s}" starts in ${inMinutes(t.minutesLeft ?? 0, 'en')}. Want me to jot down what you'll need?`,
    ],
  },
};

const TITLES: Record<NudgeTrigger['kind'], Record<'zh' | 'en', string>> = {
  pain_point_recurring: { zh: '想和你聊聊', en: 'Something I noticed' },
  goal_deadline: { zh: '目标快到期了', en: 'Your goal is coming up' },
  reminder_upcoming: { zh: '快到时间了', en: 'Coming up soon' },
  pain_point_recalled: { zh: '想再问问你', en: 'Checking in' },
  goal_recalled: { zh: '关于你的目标', en: 'About your goal' },
};

/** The nudge for `trigger`; `variantDraw` in [0, 1) picks one of the phrasings. */
export function composeNudge(trigger: NudgeTrigger, variantDraw: number): NudgeMessage {
  const lang = languageOf(trigger.subject);
  const options = PHRASES[trigger.kind][lang];
  const pick = options[Math.min(options.length - 1, Math.floor(Math.max(0, variantDraw) * options.length))]!;
  return { title: TITLES[trigger.kind][lang], body: pick(quoteSubject(trigger.subject), trigger), lang };
}
