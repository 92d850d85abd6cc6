import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MEMORY_CONTRACT_VERSION } from '../src/client/temporal-contract';
import { createTestContext, type TestContext } from './support/harness';
import { poll } from './support/poll';

// Issue #24 item 5: the Temporal contract from Python. examples/python-chat/chat.py, run with the
// official temporalio SDK (installed by scripts/setup.sh), recalls and hands the turn to
// ExtractMemories against the real stack with payload encryption on, as the TypeScript example does.

const run = promisify(execFile);
// PYTHON_CHAT_PYTHON: another interpreter with temporalio, for a machine whose .stack is shared.
const python = process.env.PYTHON_CHAT_PYTHON ?? '.stack/venv/bin/python';

let ctx: TestContext;

beforeAll(async () => {
  ctx = await createTestContext();
}, 180_000);

afterAll(async () => {
  await ctx?.close();
});

describe('a Python caller over Temporal', () => {
  it('recalls the user\'s memory into the prompt and ExtractMemories stores and extracts the turn', async () => {
    expect(existsSync(python), `${python} missing: run scripts/setup.sh`).toBe(true);
    expect(ctx.runtime.payloadEncryption, 'this test needs payload encryption on').toBeDefined();
    const user = `${ctx.prefix}-py`;
    const key = ctx.userKey(user);
    expect((await ctx.call('POST', `/v1/users/${user}/memories`, { text: '我对花生过敏，吃了会起疹子', type: 'fact' })).status).toBe(201);
    // Another user's memory must not reach this user's prompt.
    expect((await ctx.call('POST', `/v1/users/${ctx.prefix}-other/memories`, { text: '我对芒果过敏', type: 'fact' })).status).toBe(201);

    const { stdout } = await run(python, ['examples/python-chat/chat.py', user, 'py-c1', '我对什么过敏？我最近在准备马拉松，目标是跑进4小时。'], {
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: inject('stack').temporalAddress,
        TEMPORAL_NAMESPACE: ctx.runtime.config.temporal.namespace,
        MEMORY_TASK_QUEUE: ctx.taskQueue,
        CHAT_TASK_QUEUE: `python-chat-${ctx.prefix}`,
        MEMORY_TENANT: 'tenant-a',
      },
      timeout: 150_000,
    });
    const turn = JSON.parse(stdout);

    // recall ran on the memory task queue, and its context is in the prompt the handler built.
    expect(turn.recall.memories.some((m: { text: string }) => m.text.includes('花生'))).toBe(true);
    // The memory sits in the persona (system) once it is built, and in the prefix before the
    // user's text until then: either way it is in the prompt.
    expect(`${turn.recall.context.system}\n${turn.recall.context.userPrefix}`).toContain('花生');
    expect(JSON.stringify(turn.recall)).not.toContain('芒果');
    expect(turn.prompt[0]).toEqual({ role: 'system', content: turn.recall.context.system });
    expect(turn.prompt[1].content).toBe(turn.recall.context.userPrefix + '我对什么过敏？我最近在准备马拉松，目标是跑进4小时。');
    expect(turn.prompt[1].content.endsWith('我对什么过敏？我最近在准备马拉松，目标是跑进4小时。')).toBe(true);

    // ExtractMemories stored the turn's two messages and extracted a memory from them.
    const extraction = turn.extraction;
    expect(extraction).toMatchObject({ contractVersion: MEMORY_CONTRACT_VERSION, userKey: key, conversationId: 'py-c1' });
    expect(extraction.messages.inserted).toHaveLength(2);
    expect(extraction.messages.duplicates).toEqual([]);
    expect(extraction.decisions.some((d: { action: string; text: string }) => d.action === 'create' && d.text.includes('马拉松'))).toBe(true);
    const listed = await poll(
      () => ctx.call('GET', `/v1/users/${user}/memories`),
      (r) => r.body.memories.some((m: { text: string }) => m.text.includes('马拉松')),
    );
    expect(listed.status).toBe(200);
    const stored = await ctx.runtime.pool.query('SELECT role FROM messages WHERE user_id = $1 AND conversation_id = $2 ORDER BY seq', [key, 'py-c1']);
    expect(stored.rows.map((r) => r.role)).toEqual(['user', 'assistant']);
  }, 240_000);
});
