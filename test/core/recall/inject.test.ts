import { describe, expect, it } from 'vitest';
import { countTokens } from '../../../src/core/text/token-budget';
import { EXCHANGES_HEADER, MEMORIES_HEADER, formatContext, type FormattableMemory, type PastExchange } from '../../../src/core/recall/format';
import { bigramContainment, bigramJaccard, EXCHANGE_PRIOR, exchangeDuplicates, exchangesRepeat, onMemoryRrfScale, rankForInjection, type JointExchange, type JointMemory } from '../../../src/core/recall/inject';

const AT = new Date('2026-09-01T03:00:00Z');
const rrf = (...ranks: number[]) => ranks.reduce((s, r) => s + 1 / (60 + r), 0);

function mem(id: string, text: string, score: number, source?: JointMemory['memory']['source']): JointMemory {
  const memory: JointMemory['memory'] = { id, text, type: 'fact', scope: 'global', confidence: 0.9, createdAt: AT, ...(source ? { source } : {}) };
  return { memory, score };
}

function exch(key: string, userText: string, assistantText: string, score: number, messageIds = [`${key}-u`, `${key}-a`], conversationId = 'c1'): JointExchange {
  return { key, conversationId, exchange: { date: AT, userText, assistantText, messageIds }, score };
}

const kinds = (items: ReturnType<typeof rankForInjection>['items']) => items.map((i) => (i.kind === 'memory' ? `m:${i.memory.id}` : `x:${i.exchange.messageIds[0]}`));

describe('rankForInjection: memories and exchanges on one score', () => {
  it('puts an exchange found at the top of two routes above a memory the ANN route merely listed', () => {
    const out = rankForInjection({
      memories: [mem('strong', '我在杭州做后端', rrf(1, 1) * 0.5), mem('loose', '我喜欢蓝色', rrf(9) * 0.5)],
      exchanges: [exch('x1', '部署 ledger-sync 用什么？', '用 Helm chart，staging 先跑', rrf(1, 2))],
      maxExchanges: 3,
    });
    expect(kinds(out.items)).toEqual(['m:strong', 'x:x1-u', 'm:loose']);
    expect(out.scores.get('x1')).toBeCloseTo(rrf(1, 2) * EXCHANGE_PRIOR);
  });

  it('lets a memory found as well as an exchange win: the exchange prior is below a medium fact at equal evidence', () => {
    const out = rankForInjection({ memories: [mem('m', 'a', rrf(1) * 0.75 * 0.7)], exchanges: [exch('x', 'b', 'c', rrf(1))], maxExchanges: 3 });
    expect(kinds(out.items)).toEqual(['m:m', 'x:x-u']);
  });

  it('keeps each kind in its given order (named dates first) while interleaving', () => {
    const out = rankForInjection({
      memories: [mem('dated', 'x', 0.001), mem('better', 'y', 0.02)],
      exchanges: [exch('x-dated', 'p', 'q', 0.001), exch('x-better', 'r', 's', 0.05)],
      maxExchanges: 3,
    });
    expect(kinds(out.items).filter((k) => k.startsWith('m:'))).toEqual(['m:dated', 'm:better']);
    expect(kinds(out.items).filter((k) => k.startsWith('x:'))).toEqual(['x:x-dated-u', 'x:x-better-u']);
  });

  it('drops an exchange holding a memory source message, and one that says the same as a memory', () => {
    const out = rankForInjection({
      memories: [
        mem('src', '我对花生过敏', 0.02, { conversationId: 'c1', messageIds: ['x1-u'] }),
        mem('near', 'payment-svc 每晚 9 点超时', 0.02),
      ],
      exchanges: [
        exch('x1', '顺便说一下，我对花生过敏，吃了会起疹子。', '好的，我记住了。', 0.05),
        exch('x2', 'payment-svc 每晚9点超时。', '先看连接池。', 0.05),
        exch('x3', '我们下周去爬山吧', '好主意', 0.03),
      ],
      maxExchanges: 3,
    });
    expect(out.duplicates).toEqual([
      { exchange: 'x1', memory: 'src', dropped: 'exchange' },
      { exchange: 'x2', memory: 'near', dropped: 'exchange' },
    ]);
    expect(kinds(out.items)).toEqual(['m:src', 'm:near', 'x:x3-u']);
  });

  it('lifts a weakly found memory to where the exchange repeating it would stand, so the budget keeps the answer', () => {
    const listed = ['a', 'b', 'c', 'd'].map((id, i) => mem(id, `fact ${id}`, rrf(i + 1) * 0.5));
    const weak = mem('eczema', 'The rash on my arms is contact eczema from the new laundry detergent', rrf(30) * 0.5);
    const out = rankForInjection({
      memories: [...listed, weak],
      exchanges: [exch('x1', 'The dermatologist says the rash on my arms is contact eczema from the new laundry detergent.', 'Try a fragrance-free detergent.', rrf(1, 1))],
      maxExchanges: 3,
    });
    expect(out.duplicates).toEqual([{ exchange: 'x1', memory: 'eczema', dropped: 'exchange' }]);
    expect(kinds(out.items)[0]).toBe('m:eczema');
    expect(out.scores.get('eczema')).toBeCloseTo(rrf(1, 1) * EXCHANGE_PRIOR);
    // The other memories keep their order behind it.
    expect(kinds(out.items).slice(1)).toEqual(['m:a', 'm:b', 'm:c', 'm:d']);
  });

  it('for a question about what was said, keeps the exchange and lets it carry the memory, at the better score', () => {
    const out = rankForInjection({
      memories: [mem('top', 'z', 0.03), mem('src', '助手建议：试试 4-7-8 呼吸法', 0.02, { conversationId: 'c1', messageIds: ['x1-a'] })],
      exchanges: [exch('x1', '晚上焦虑睡不着怎么办', '可以试试4-7-8呼吸法：吸气4秒，屏息7秒，呼气8秒', 0.001)],
      maxExchanges: 3,
      prefer: 'exchange',
    });
    expect(kinds(out.items)).toEqual(['m:top', 'x:x1-u']);
    expect(out.carried).toEqual(new Map([['src', 'x1']]));
    expect(out.scores.get('x1')).toBe(0.02);
  });

  it('does not take a message id from another conversation for the source', () => {
    const m = mem('m', 'abc', 1, { conversationId: 'c2', messageIds: ['m1'] }).memory;
    expect(exchangeDuplicates(m, exch('x', 'zzz', 'yyy', 1, ['m1', 'm2'], 'c1'))).toBe(false);
    expect(exchangeDuplicates(m, exch('x', 'zzz', 'yyy', 1, ['m1', 'm2'], 'c2'))).toBe(true);
  });

  it('puts pinned items first and never drops a pinned exchange as a duplicate', () => {
    const out = rankForInjection({
      memories: [mem('top', 'z', 0.05), mem('pain', 'CI 构建老是失败', 0.001, { conversationId: 'c1', messageIds: ['x1-u'] })],
      exchanges: [exch('x1', 'CI 构建老是失败', '先清缓存', 0.001)],
      pinned: new Set(['pain', 'x1']),
      maxExchanges: 3,
    });
    expect(kinds(out.items)).toEqual(['m:pain', 'x:x1-u', 'm:top']);
    expect(out.duplicates).toEqual([]);
  });

  it('keeps at most maxExchanges exchanges, counting only those not dropped', () => {
    const out = rankForInjection({
      memories: [mem('m', '我对花生过敏', 0.01, { messageIds: ['a-u'] })],
      exchanges: ['a', 'b', 'c', 'd'].map((k) => exch(k, `line ${k} ${k}${k}`, 'ok', 0.02)),
      maxExchanges: 2,
    });
    expect(kinds(out.items).filter((k) => k.startsWith('x:'))).toEqual(['x:b-u', 'x:c-u']);
  });

  it('measures near-identity on character bigrams, ignoring spaces and punctuation', () => {
    expect(bigramJaccard('我对花生过敏', '我对花生过敏。')).toBe(1);
    expect(bigramJaccard('I am vegetarian', "I'm vegetarian!")).toBeGreaterThan(0.8);
    expect(bigramJaccard('我对花生过敏', '今天去爬山')).toBe(0);
    expect(bigramJaccard('', 'x')).toBe(0);
  });
});

describe('formatContext with a joint order', () => {
  const m = (id: string, text: string): FormattableMemory => ({ id, text, type: 'fact', scope: 'global', confidence: 0.9, createdAt: AT });
  const x = (id: string, text: string): PastExchange => ({ date: AT, userText: text, assistantText: '好的', messageIds: [id] });

  it('fills the budget in the joint order but keeps the sections: memories, then past exchanges', () => {
    const out = formatContext({
      memories: [],
      injection: [
        { kind: 'exchange', exchange: x('e1', '部署 ledger-sync 用 Helm') },
        { kind: 'memory', memory: m('m1', '我在杭州') },
      ],
      budget: 400,
    });
    expect(out.userPrefix.indexOf(MEMORIES_HEADER)).toBeLessThan(out.userPrefix.indexOf(EXCHANGES_HEADER));
    expect(out.included).toEqual(['m1']);
    expect(out.includedMessageIds).toEqual(['e1']);
  });

  it('under a tight budget keeps the exchange ranked first and drops the memory ranked after it', () => {
    // Long enough that the budget stays above the compact style's threshold.
    const exchange = x('e1', '部署 ledger-sync 的时候用 Helm chart，先在 staging 跑一遍再上生产。'.repeat(6));
    const full = formatContext({ memories: [], injection: [{ kind: 'exchange', exchange }], budget: 1000 });
    const memory = m('m1', '我喜欢在周末去西湖边上跑步，一般跑十公里左右，然后去吃早饭');
    const out = formatContext({ memories: [], injection: [{ kind: 'exchange', exchange }, { kind: 'memory', memory }], budget: full.tokens });
    expect(out.includedMessageIds).toEqual(['e1']);
    expect(out.included).toEqual([]);
    expect(countTokens(out.system) + countTokens(out.userPrefix)).toBeLessThanOrEqual(full.tokens);
    // Memories first (no joint order): the same budget goes to the memory first.
    expect(formatContext({ memories: [memory], pastExchanges: [exchange], budget: full.tokens }).included).toEqual(['m1']);
  });

  it('moves a global instruction given in the joint order to the system part', () => {
    const out = formatContext({ memories: [], injection: [{ kind: 'memory', memory: { ...m('i1', '以后用中文回答'), type: 'instruction' } }], budget: 400 });
    expect(out.system).toContain('以后用中文回答');
    expect(out.userPrefix).toBe('');
  });
});

describe('onMemoryRrfScale: exchange sums on the memory fusion scale', () => {
  it('scores the ranks an exchange search sum stands for as the memory fusion would', () => {
    const k5 = (...ranks: number[]) => ranks.reduce((s, r) => s + 1 / (5 + r), 0);
    expect(onMemoryRrfScale(k5(1), 1, 5)).toBeCloseTo(rrf(1));
    expect(onMemoryRrfScale(k5(3, 3), 2, 5)).toBeCloseTo(rrf(3, 3));
    // Unequal ranks land between the two equal-rank readings.
    const mixed = onMemoryRrfScale(k5(1, 9), 2, 5);
    expect(mixed).toBeGreaterThan(rrf(9, 9));
    expect(mixed).toBeLessThan(rrf(1, 1));
    expect(onMemoryRrfScale(0, 1, 5)).toBe(0);
  });

  it('keeps a single-route exchange below a memory found at the same rank by two routes', () => {
    const x = onMemoryRrfScale(1 / 6, 1, 5) * EXCHANGE_PRIOR;
    expect(x).toBeLessThan(rrf(1, 1) * 0.5);
  });
});

describe('duplicates beyond near-identical text', () => {
  it('finds a memory stated whole inside a longer line of another conversation', () => {
    const m = mem('allergy', '我对花生过敏', 0.02, { conversationId: 'c9', messageIds: ['other'] });
    expect(bigramContainment('我对花生过敏', '顺便说一下，我对花生过敏，吃了会起疹子。')).toBe(1);
    expect(exchangeDuplicates(m.memory, exch('x', '顺便说一下，我对花生过敏，吃了会起疹子。', '好的，记住了。', 0.05, undefined, 'c2'))).toBe(true);
    expect(exchangeDuplicates(mem('en', 'My orthopedist told me to stop running', 0.02).memory, exch('y', 'Quick update: my orthopedist told me to stop running for six weeks.', 'Sorry to hear that.', 0.05))).toBe(true);
  });

  it('does not call a short memory contained in every line that mentions it a duplicate', () => {
    expect(bigramContainment('喜欢猫', '我喜欢猫，但是对猫毛过敏')).toBe(0);
    expect(exchangeDuplicates(mem('short', '喜欢猫', 0.02).memory, exch('z', '我喜欢猫，但是对猫毛过敏', '可以考虑无毛猫。', 0.05))).toBe(false);
  });

  it('keeps a memory that only shares the topic with the exchange', () => {
    expect(exchangeDuplicates(mem('topic', '我的膝盖软骨受过伤', 0.02).memory, exch('k', '推荐一双跑鞋给我', '可以看看缓震好的款式。', 0.05))).toBe(false);
  });

  it('injects the same thing said in two conversations once: the better-ranked exchange stays', () => {
    const out = rankForInjection({
      memories: [],
      exchanges: [
        exch('first', '我下个月搬到杭州滨江', '滨江通勤方便。', 0.05, undefined, 'c1'),
        exch('again', '我下个月搬到杭州滨江。', '记得办宽带迁移。', 0.04, undefined, 'c2'),
        exch('other', '装修报价12万', '合同写清楚增项。', 0.03, undefined, 'c3'),
      ],
      maxExchanges: 3,
    });
    expect(kinds(out.items)).toEqual(['x:first-u', 'x:other-u']);
    expect(exchangesRepeat({ date: AT, userText: 'a b', assistantText: '', messageIds: [] }, { date: AT, userText: '完全不同', assistantText: '', messageIds: [] })).toBe(false);
  });
});
