import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryClient } from '../src/client/index';
import { createTestContext, TEST_KEY, type TestContext } from './support/harness';

// Conversation search over a transcript whose lines say their speaker ("Name: text"), on the real
// stack: a question about one speaker shows what that speaker told, not the questions they asked
// the other side (nor the other side's answers), in English and in Chinese.
// A question about both people vouches for what each of them told.

let ctx: TestContext;
let client: MemoryClient;
beforeAll(async () => {
  ctx = await createTestContext({ RECALL_TIMEOUT_MS: '20000' });
  client = new MemoryClient({ baseUrl: ctx.baseUrl, apiKey: TEST_KEY });
});
afterAll(async () => {
  await ctx?.close();
});

const at = (iso: string, plusSeconds = 0) => new Date(new Date(iso).getTime() + plusSeconds * 1000).toISOString();

async function say(user: string, conversation: string, startIso: string, lines: [role: 'user' | 'assistant', content: string][]): Promise<void> {
  await client.addMessages(
    user,
    conversation,
    lines.map(([role, content], i) => ({ id: `${conversation}-m${i + 1}`, role, content, at: at(startIso, i * 30) })),
  );
}

/** Indexes the user's lines, then searches them under a line budget: each line shown, with its routes. */
async function indexAndSearch(user: string, query: string, maxLines: number, now: string): Promise<{ id: string; routes: string[] }[]> {
  await ctx.runtime.temporal.workflow.execute('exchangeIndexWorkflow', { taskQueue: ctx.taskQueue, workflowId: `${ctx.prefix}-index-${user}`, args: [{}] });
  const search = await client.searchConversations(user, { query, maxLines, now });
  return search.exchanges.map((x) => ({ id: (x.user ?? x.assistant)!.id, routes: x.routes }));
}

describe('a question about the speakers of a transcript', () => {
  it('shows what that speaker told, not the questions they asked the other side', { timeout: 180_000 }, async () => {
    const user = 'speaker-en';
    await say(user, 'march', '2026-03-01T09:00:00Z', [
      ['user', 'Ben: I went to a blues concert last night, the guitarist was great.'],
      ['assistant', 'Ana: Cool! What instruments do you play?'],
      ['user', 'Ben: Guitar and drums, I have played instruments since school.'],
      ['assistant', 'Ana: Nice. I play the violin when I need to relax.'],
    ]);
    await say(user, 'april', '2026-04-01T09:00:00Z', [
      ['user', 'Ben: How was your weekend?'],
      ['assistant', 'Ana: Busy! I started clarinet lessons on Saturday.'],
    ]);
    const shown = await indexAndSearch(user, 'What instruments does Ana play?', 3, '2026-05-01T10:00:00Z');
    const ids = shown.map((s) => s.id);
    expect(ids, JSON.stringify(shown)).toContain('march-m4');
    expect(shown.find((s) => s.id === 'march-m4')!.routes).toContain('exchange_speaker');
    expect(ids).not.toContain('march-m2');
  });

  it('does the same for a Chinese transcript', { timeout: 180_000 }, async () => {
    const user = 'speaker-zh';
    await say(user, 'wk1', '2026-03-01T09:00:00Z', [
      ['user', '小王：我周末去宠物店看了看，好多小猫。'],
      ['assistant', '小林：好可爱！你养宠物吗？'],
      ['user', '小王：养了一只猫，叫咪咪，是宠物店买的。'],
      ['assistant', '小林：我家有两只狗，叫豆豆和球球。'],
    ]);
    const shown = await indexAndSearch(user, '小林养了什么宠物', 2, '2026-05-01T10:00:00Z');
    const ids = shown.map((s) => s.id);
    expect(ids, JSON.stringify(shown)).toContain('wk1-m4');
    expect(shown.find((s) => s.id === 'wk1-m4')!.routes).toContain('exchange_speaker');
    expect(ids).not.toContain('wk1-m2');
  });

  it('vouches for what each of two people told when the question is about both', { timeout: 180_000 }, async () => {
    const user = 'speaker-both';
    await say(user, 'june', '2026-06-01T09:00:00Z', [
      ['user', 'Ben: My cat Miso knocked the plant over again this morning.'],
      ['assistant', 'Ana: Ha! Do you have any other animals at home?'],
      ['user', 'Ben: No, just Miso. And you?'],
      ['assistant', 'Ana: We adopted a rescue greyhound called Pixel last spring.'],
    ]);
    await say(user, 'july', '2026-07-01T09:00:00Z', [
      ['user', 'Ben: The new office has a nice view of the harbour.'],
      ['assistant', 'Ana: Lucky you, mine looks at a car park.'],
    ]);
    const shown = await indexAndSearch(user, 'What pets do Ana and Ben have?', 4, '2026-08-01T10:00:00Z');
    const ids = shown.map((s) => s.id);
    expect(ids, JSON.stringify(shown)).toEqual(expect.arrayContaining(['june-m1', 'june-m4']));
    // A question naming both people used to vouch for neither: each one's lines now vouch apart.
    expect(shown.find((s) => s.id === 'june-m1')!.routes).toContain('exchange_speaker');
    expect(shown.find((s) => s.id === 'june-m4')!.routes).toContain('exchange_speaker');
  });
});
