import { describe, expect, it } from 'vitest';
import { budgetsFor, routeLimits } from '../src/api/rate-limits';
import { loadConfig } from '../src/config';
import { mcpBudgets } from '../src/mcp/budgets';

const call = (name: string, id = 1) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } });

describe('MCP and proxy rate limits', () => {
  const table = routeLimits(loadConfig({ NODE_ENV: 'test' }));

  it('spends per tool call what the tool’s route spends, and nothing for the handshake', () => {
    expect(mcpBudgets({ jsonrpc: '2.0', id: 0, method: 'initialize', params: {} })).toEqual([]);
    expect(mcpBudgets({ jsonrpc: '2.0', id: 0, method: 'tools/list' })).toEqual([]);
    expect(mcpBudgets(call('memory_search'))).toEqual(['recall']);
    expect(mcpBudgets(call('conversation_search'))).toEqual(['recall']);
    expect(mcpBudgets(call('memory_add'))).toEqual(['writes', 'llm']);
    expect(mcpBudgets(call('memory_forget'))).toEqual(['writes']);
    expect(mcpBudgets(call('reminders_list'))).toEqual([]);
    expect(mcpBudgets(call('reminder_snooze'))).toEqual(['writes']);
    expect(mcpBudgets(call('no_such_tool'))).toEqual([]);
    expect(mcpBudgets('garbage')).toEqual([]);
  });

  it('counts every call of a batch', () => {
    expect(mcpBudgets([call('memory_search', 1), call('memory_search', 2), call('memory_add', 3)])).toEqual(['recall', 'recall', 'writes', 'llm']);
  });

  it('routes /mcp and the proxy through the table', () => {
    expect(budgetsFor(table, 'POST', '/mcp', call('memory_add'))).toEqual(['writes', 'llm']);
    expect(budgetsFor(table, 'POST', '/proxy/v1/chat/completions', {})).toEqual(['recall', 'writes', 'llm']);
    expect(table['POST /proxy/v1/chat/completions']!.bodyLimit).toBeGreaterThanOrEqual(1024 * 1024);
  });
});
