import { describe, expect, it } from 'vitest';
import { indexableLines, messageKey, pairExchange, type ExchangeCandidate, type StoredLine } from '../../../src/core/exchange-lines';
import { asksQuestion, episodeBoosts, fitLines, inRanges, rankExchanges, rankLines, type RankedExchange } from '../../../src/core/recall/exchanges';
import { cutCodePoints } from '../../../src/core/text/code-points';

const line = (conversationId: string, messageId: string, seq: number, role: 'user' | 'assistant', content: string, iso: string): StoredLine => ({
  conversationId,
  messageId,
  seq,
  role,
  content,
  at: new Date(iso),
});

describe('pairExchange', () => {
  const q = line('c1', 'm1', 1, 'user', 'Any podcast for my commute?', '2026-04-14T08:30:00Z');
  const a = line('c1', 'm2', 2, 'assistant', "Try Dan Carlin's Hardcore History.", '2026-04-14T08:30:30Z');
  const next = line('c1', 'm3', 3, 'user', 'Sounds perfect, I will queue it up.', '2026-04-14T08:31:00Z');

  it('pairs a user line with the reply after it, and a reply with the question before it, as one exchange', () => {
    const fromUser = pairExchange(q, undefined, a);
    const fromAssistant = pairExchange(a, q, next);
    expect(fromUser.key).toBe(fromAssistant.key);
    expect(fromUser.messageIds).toEqual(['m1', 'm2']);
    expect(fromUser.date).toEqual(q.at);
    expect(fromAssistant.user?.content).toBe(q.content);
    expect(fromAssistant.assistant?.content).toBe(a.content);
  });

  it('never pairs two lines of the same role, nor lines of another conversation', () => {
    expect(pairExchange(next, a, undefined).messageIds).toEqual(['m3']);
    const foreign = line('c2', 'm9', 9, 'assistant', 'Unrelated.', '2026-04-14T08:32:00Z');
    expect(pairExchange(next, undefined, foreign).assistant).toBeUndefined();
  });
});

describe('rankExchanges', () => {
  const day = (d: string) => `2026-09-${d}T19:30:00Z`;
  const mk = (id: string, userText: string, iso: string): ExchangeCandidate =>
    pairExchange(line('c', `${id}u`, 1, 'user', userText, iso), undefined, line('c', `${id}a`, 2, 'assistant', `reply to ${userText}`, iso));
  const tuesday = mk('t', 'Made mushroom risotto tonight', day('08'));
  const thursday = mk('h', 'Grilled salmon with lemon today', day('10'));
  const secret = mk('s', 'I have type 2 diabetes', day('09'));
  const exchanges = new Map([tuesday, thursday, secret].map((x) => [x.key, x]));
  const range = [{ start: new Date('2026-09-08T00:00:00Z'), end: new Date('2026-09-09T00:00:00Z') }];

  it('puts exchanges from the named date first, whatever their fused score', () => {
    const ranked = rankExchanges({
      rankings: [
        { route: 'bm25', ids: [thursday.key, tuesday.key] },
        { route: 'episode', ids: [thursday.key] },
      ],
      exchanges,
      ranges: range,
      hidden: new Set(),
      limit: 3,
    });
    expect(ranked.map((x) => x.key)).toEqual([tuesday.key, thursday.key]);
    expect(ranked[0]!.inRange).toBe(true);
    expect(ranked[1]!.routes).toEqual(['bm25', 'episode']);
  });

  it('orders by fused score without a date', () => {
    const ranked = rankExchanges({ rankings: [{ route: 'bm25', ids: [thursday.key, tuesday.key] }], exchanges, ranges: [], hidden: new Set(), limit: 3 });
    expect(ranked.map((x) => x.key)).toEqual([thursday.key, tuesday.key]);
  });

  it('with a small RRF k, one route\'s top exchange outranks one that two routes only half liked', () => {
    const fillers = Array.from({ length: 8 }, (_, i) => `absent-${i}`);
    const rankings = [
      { route: 'bm25', ids: [thursday.key, 'absent-a', 'absent-b', tuesday.key] },
      { route: 'ann', ids: ['absent-c', 'absent-d', 'absent-e', tuesday.key, ...fillers.slice(0, 5), thursday.key] },
    ];
    const input = { rankings, exchanges, ranges: [], hidden: new Set<string>(), limit: 2 };
    // k = 60: 1/61 + 1/70 < 2/64, agreement wins; k = 5: 1/6 + 1/15 > 2/9, the clear best wins.
    expect(rankExchanges(input).map((x) => x.key)).toEqual([tuesday.key, thursday.key]);
    expect(rankExchanges({ ...input, rrfK: 5 }).map((x) => x.key)).toEqual([thursday.key, tuesday.key]);
  });

  it('drops an exchange when any of its lines is hidden', () => {
    const ranked = rankExchanges({
      rankings: [{ route: 'bm25', ids: [secret.key, tuesday.key] }],
      exchanges,
      ranges: [],
      hidden: new Set([messageKey('c', 'sa')]),
      limit: 3,
    });
    expect(ranked.map((x) => x.key)).toEqual([tuesday.key]);
  });

  it('requires keyword evidence when asked to, except inside a named date range', () => {
    const input = {
      rankings: [{ route: 'bm25', ids: [thursday.key, tuesday.key] }],
      exchanges,
      hidden: new Set<string>(),
      minMatchedTerms: 2,
      matchedTerms: new Map([[thursday.key, 1], [tuesday.key, 2]]),
      limit: 3,
    };
    expect(rankExchanges({ ...input, ranges: [] }).map((x) => x.key)).toEqual([tuesday.key]);
    const inRange = rankExchanges({ ...input, matchedTerms: new Map(), ranges: range });
    expect(inRange.map((x) => x.key)).toEqual([tuesday.key]);
  });

  it('skips a short line that has no counterpart, and respects the limit', () => {
    const lone = pairExchange(line('c', 'lu', 5, 'user', 'Love it.', day('08')));
    const all = new Map([...exchanges, [lone.key, lone]]);
    const ranked = rankExchanges({ rankings: [{ route: 'time', ids: [lone.key, tuesday.key, thursday.key] }], exchanges: all, ranges: [], hidden: new Set(), limit: 1 });
    expect(ranked.map((x) => x.key)).toEqual([tuesday.key]);
  });
});

describe('helpers', () => {
  it('inRanges is half-open', () => {
    const r = [{ start: new Date('2026-01-01T00:00:00Z'), end: new Date('2026-01-02T00:00:00Z') }];
    expect(inRanges(new Date('2026-01-01T00:00:00Z'), r)).toBe(true);
    expect(inRanges(new Date('2026-01-02T00:00:00Z'), r)).toBe(false);
  });

  it('cutCodePoints never splits a surrogate pair', () => {
    expect(cutCodePoints('😀😀😀😀', 3)).toBe('😀😀…');
    expect(cutCodePoints('短', 3)).toBe('短');
  });
});

describe('indexableLines (what the exchange indexer embeds)', () => {
  const at = '2026-04-14T08:30:00Z';
  it('embeds each line on its own, so a vector hit names the line that matched', () => {
    const lines = [
      line('c', 'u1', 1, 'user', 'I went to a support group yesterday', at),
      line('c', 'a1', 2, 'assistant', 'How did it feel?', at),
    ];
    expect(indexableLines(lines).map((x) => [x.line.messageId, x.text])).toEqual([
      ['u1', 'I went to a support group yesterday'],
      ['a1', 'How did it feel?'],
    ]);
  });

  it('leaves empty lines out and cuts long ones', () => {
    const out = indexableLines([line('c', 'u', 1, 'user', '   ', at), line('c', 'v', 2, 'user', 'x'.repeat(5000), at)]);
    expect(out).toHaveLength(1);
    expect(Array.from(out[0]!.text).length).toBe(1500);
  });
});

describe('fitLines: a budget counted in lines', () => {
  const at = '2026-05-08T13:56:00Z';
  const ranked = (id: string, conversationId = 's1'): RankedExchange => ({
    ...pairExchange(line(conversationId, `${id}u`, 1, 'user', `question ${id}`, at), undefined, line(conversationId, `${id}a`, 2, 'assistant', `answer ${id}`, '2026-05-08T13:57:00Z')),
    score: 1,
    routes: ['exchange_bm25'],
    inRange: false,
  });
  const found = (...ids: string[]) => new Set(ids.map((m) => messageKey('s1', m)));

  it('keeps only the found line of an exchange whose partner nothing found, so more exchanges fit', () => {
    const out = fitLines([ranked('x'), ranked('y'), ranked('z')], found('xa', 'yu', 'ya', 'zu'), 4);
    expect(out.map((x) => x.messageIds)).toEqual([['xa'], ['yu', 'ya'], ['zu']]);
    expect(out[0]!.user).toBeUndefined();
    expect(out[0]!.assistant?.content).toBe('answer x');
    // The date is the shown line's.
    expect(out[0]!.date).toEqual(new Date('2026-05-08T13:57:00Z'));
    expect(out.flatMap((x) => x.messageIds)).toHaveLength(4);
  });

  it('keeps both lines of an exchange no line of which was found (a date or an episode brought it), and cuts the last to what fits', () => {
    const out = fitLines([ranked('x'), ranked('y')], found('ya', 'yu'), 3);
    expect(out.map((x) => x.messageIds)).toEqual([['xu', 'xa'], ['yu']]);
  });

  it('never shows more lines than the budget, nor anything for a budget of zero', () => {
    expect(fitLines([ranked('x')], found(), 0)).toEqual([]);
    expect(fitLines([ranked('x'), ranked('y')], found('xu', 'xa', 'yu', 'ya'), 1).flatMap((x) => x.messageIds)).toEqual(['xu']);
  });
});

describe('fitLines: a question brings its answer', () => {
  const ex = (id: string, seq: number, userText: string, assistantText: string): RankedExchange => ({
    ...pairExchange(line('s1', `${id}u`, seq, 'user', userText, '2026-05-08T13:56:00Z'), undefined, line('s1', `${id}a`, seq + 1, 'assistant', assistantText, '2026-05-08T13:57:00Z')),
    score: 1,
    routes: ['exchange_line_ann'],
    inRange: false,
  });
  const found = (...ids: string[]) => new Set(ids.map((m) => messageKey('s1', m)));
  const x = ex('x', 1, 'I went to a talk yesterday.', 'Nice! What was it about?');
  const y = ex('y', 3, 'It was about adoption and foster care.', 'Sounds moving.');
  const z = ex('z', 5, 'Unrelated line that was found.', 'Another one.');
  const answers = new Map([[messageKey('s1', 'xa'), y.user!]]);

  it('shows the line after a found question right after it, within the budget', () => {
    const out = fitLines([x, z], found('xa', 'zu'), 3, answers);
    expect(out.map((e) => e.messageIds)).toEqual([['xa'], ['yu'], ['zu']]);
    expect(out[1]!.user?.content).toBe('It was about adoption and foster care.');
    expect(out[1]!.assistant).toBeUndefined();
    expect(out[1]!.routes).toEqual(x.routes);
    // The budget counts the answer: two lines leave no room for z.
    expect(fitLines([x, z], found('xa', 'zu'), 2, answers).flatMap((e) => e.messageIds)).toEqual(['xa', 'yu']);
  });

  it('keeps the reply of a found user question even when nothing found the reply', () => {
    const q = ex('q', 1, 'Do you remember what my sister likes?', 'She likes hiking.');
    const out = fitLines([q], found('qu'), 10, new Map([[messageKey('s1', 'qu'), q.assistant!]]));
    expect(out.map((e) => e.messageIds)).toEqual([['qu', 'qa']]);
    expect(fitLines([q], found('qu'), 10).map((e) => e.messageIds)).toEqual([['qu']]);
  });

  it('never shows a line twice: the exchange of an answer already shown keeps only its other lines', () => {
    const out = fitLines([x, y], found('xa', 'yu', 'ya'), 10, answers);
    expect(out.flatMap((e) => e.messageIds)).toEqual(['xa', 'yu', 'ya']);
  });

  it('reads a question from how the line ends', () => {
    expect(asksQuestion('Wow! What did you take away from it?')).toBe(true);
    expect(asksQuestion('你后来去哪儿了？')).toBe(true);
    expect(asksQuestion('"Is this yours?" ')).toBe(true);
    expect(asksQuestion('Why? Because I loved it.')).toBe(false);
    expect(asksQuestion('I went hiking.')).toBe(false);
  });
});

describe('episodeBoosts: episodes point to sessions, exchanges answer', () => {
  const at = '2026-05-08T13:56:00Z';
  const mk = (conversationId: string, id: string, text: string): ExchangeCandidate =>
    pairExchange(line(conversationId, `${id}u`, 1, 'user', text, at), undefined, line(conversationId, `${id}a`, 2, 'assistant', 'ok', at));
  const opener = mk('s1', 'open', 'Hey Mel! Good to see you!');
  const answer = mk('s1', 'ans', 'I went to a LGBTQ support group yesterday');
  const other = mk('s2', 'oth', 'The support group at school was full');
  const exchanges = new Map([opener, answer, other].map((x) => [x.key, x]));
  const session1 = new Set(['openu', 'opena', 'ansu', 'ansa'].map((m) => messageKey('s1', m)));

  it('boosts only exchanges the answering routes found, in their own order, never the session opener', () => {
    const answering = [{ route: 'exchange_bm25', ids: [other.key, answer.key] }];
    const boosts = episodeBoosts({ answering, episodes: [{ route: 'episode_bm25', messageKeys: session1 }], exchanges, perRoute: 5 });
    expect(boosts).toEqual([{ route: 'episode_bm25', ids: [answer.key] }]);
    const ranked = rankExchanges({ rankings: [...answering, ...boosts], exchanges, ranges: [], hidden: new Set(), limit: 3 });
    expect(ranked.map((x) => x.key)).toEqual([answer.key, other.key]);
    expect(ranked.some((x) => x.key === opener.key)).toBe(false);
  });

  it('gives nothing when the answering routes found nothing in the session, and keeps at most perRoute', () => {
    expect(episodeBoosts({ answering: [{ route: 'exchange_ann', ids: [other.key] }], episodes: [{ route: 'episode_ann', messageKeys: session1 }], exchanges, perRoute: 5 })).toEqual([]);
    const both = episodeBoosts({ answering: [{ route: 'exchange_ann', ids: [opener.key, answer.key] }], episodes: [{ route: 'episode_ann', messageKeys: session1 }], exchanges, perRoute: 1 });
    expect(both).toEqual([{ route: 'episode_ann', ids: [opener.key] }]);
  });
});

describe('rankLines: a budget filled from a ranking of lines', () => {
  const at = (m: number) => `2026-05-08T13:${String(m).padStart(2, '0')}:00Z`;
  const l = (id: string, seq: number, role: 'user' | 'assistant', content: string): StoredLine => line('s1', id, seq, role, content, at(seq));
  const u1 = l('u1', 1, 'user', 'We finally booked the flights for the trip.');
  const a1 = l('a1', 2, 'assistant', 'Exciting! Which airline did you go with?');
  const u2 = l('u2', 3, 'user', 'The Portuguese one, it was the cheapest.');
  const a2 = l('a2', 4, 'assistant', 'Nice, enjoy the trip and the food there.');
  const u3 = l('u3', 5, 'user', 'Jess is coming along with me, by the way.');
  const a3 = l('a3', 6, 'assistant', 'Love it.');
  const u4 = l('u4', 7, 'user', 'Also renewed my passport last week, just in time.');
  const lines = new Map([u1, a1, u2, a2, u3, a3, u4].map((x) => [messageKey('s1', x.messageId), x]));
  const k = (...ids: string[]) => ids.map((id) => messageKey('s1', id));
  const ids = (out: RankedExchange[]) => out.flatMap((x) => x.messageIds);

  it('fills the budget with the best lines of every route, not their partners', () => {
    // u1 is first by words and third by vector, u4 second by both: RRF over lines, k 5.
    const out = rankLines({ rankings: [{ route: 'exchange_bm25', ids: k('u1', 'u4') }, { route: 'exchange_line_ann', ids: k('u3', 'u4', 'u1') }], lines, ranges: [], hidden: new Set(), maxLines: 3, rrfK: 5 });
    expect(ids(out)).toEqual(['u1', 'u4', 'u3']);
    expect(out.every((x) => x.messageIds.length === 1)).toBe(true);
  });

  it('gives a pair hit to both of its lines, skips a short lone line, and follows a question with its answer', () => {
    const out = rankLines({
      rankings: [{ route: 'exchange_ann', ids: k('u3', 'a3', 'u1', 'a1') }],
      lines,
      ranges: [],
      hidden: new Set(),
      answers: new Map([[messageKey('s1', 'a1'), u2]]),
      maxLines: 10,
      rrfK: 5,
    });
    // "Love it." (a3) is too short to be worth a line on its own; a1 asks, so u2 comes right after it.
    expect(ids(out)).toEqual(['u3', 'u1', 'a1', 'u2']);
  });

  it('puts lines said on a named date first, never shows a hidden line, and never exceeds the budget', () => {
    const ranges = [{ start: new Date(at(7)), end: new Date(at(8)) }];
    const out = rankLines({ rankings: [{ route: 'exchange_bm25', ids: k('u1', 'u2', 'u3', 'u4') }], lines, ranges, hidden: new Set(k('u2')), maxLines: 3, rrfK: 5 });
    expect(ids(out)).toEqual(['u4', 'u1', 'u3']);
    expect(out[0]!.inRange).toBe(true);
    expect(rankLines({ rankings: [{ route: 'exchange_bm25', ids: k('u1', 'u2') }], lines, ranges: [], hidden: new Set(), maxLines: 0 })).toEqual([]);
  });
});
