import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config';
import { mcpHostAllowed, mcpOriginAllowed } from '../src/mcp/http';

// The pure half of /mcp's DNS-rebinding defence; test/surface-hardening.int.test.ts sends the
// same headers to the real endpoint.

describe('/mcp Origin and Host checks', () => {
  it('defaults: no browser origin, the loopback names and the listen host on any port', () => {
    const { mcp } = loadConfig({});
    expect(mcp.allowedOrigins).toEqual([]);
    expect(mcp.allowedHosts).toEqual(['localhost', '127.0.0.1', '[::1]']);
    expect(loadConfig({ HOST: '10.0.0.5' }).mcp.allowedHosts).toContain('10.0.0.5');
    expect(loadConfig({ HOST: '::1' }).mcp.allowedHosts).toContain('[::1]');
    // A wildcard listen address is not a name anyone resolves: a container sets MCP_ALLOWED_HOSTS.
    expect(loadConfig({ HOST: '0.0.0.0' }).mcp.allowedHosts).toEqual(['localhost', '127.0.0.1', '[::1]']);
    expect(loadConfig({ MCP_ALLOWED_HOSTS: 'Memory.Example.com, memory.internal:8443' }).mcp.allowedHosts).toEqual(['memory.example.com', 'memory.internal:8443']);
    expect(loadConfig({ MCP_ALLOWED_ORIGINS: 'https://App.example.com/, http://localhost:3000' }).mcp.allowedOrigins).toEqual(['https://app.example.com', 'http://localhost:3000']);
    expect(() => loadConfig({ MCP_ALLOWED_ORIGINS: 'app.example.com' })).toThrow(/MCP_ALLOWED_ORIGINS/);
    expect(() => loadConfig({ MCP_ALLOWED_ORIGINS: 'https://app.example.com/path' })).toThrow(/MCP_ALLOWED_ORIGINS/);
    expect(() => loadConfig({ MCP_ALLOWED_HOSTS: 'http://memory.example.com' })).toThrow(/MCP_ALLOWED_HOSTS/);
  });

  it('refuses any Origin by default and lets clients without one through', () => {
    expect(mcpOriginAllowed(undefined, [])).toBe(true);
    for (const origin of ['https://evil.example', 'http://localhost:8080', 'null', 'file://', 'not an origin']) expect(mcpOriginAllowed(origin, []), origin).toBe(false);
    const allowed = ['https://app.example.com'];
    expect(mcpOriginAllowed('https://app.example.com', allowed)).toBe(true);
    expect(mcpOriginAllowed('https://APP.example.com:443', allowed)).toBe(true);
    for (const origin of ['http://app.example.com', 'https://app.example.com.evil.example', 'https://evil.example', 'null']) expect(mcpOriginAllowed(origin, allowed), origin).toBe(false);
  });

  it('answers only to allowed Host names, however the header is spelled', () => {
    const allowed = loadConfig({}).mcp.allowedHosts;
    for (const host of ['localhost', 'localhost:8080', '127.0.0.1:41234', '[::1]:8080', 'LOCALHOST:80']) expect(mcpHostAllowed(host, allowed), host).toBe(true);
    // The rebinding attacker's own name, look-alikes, and values that are not a bare host.
    for (const host of [undefined, '', 'evil.example', 'evil.example:8080', 'localhost.evil.example', 'localhost.', 'user@localhost', 'localhost/x', 'localhost:8080 evil', '127.0.0.2', '[::2]'])
      expect(mcpHostAllowed(host, allowed), String(host)).toBe(false);
    const pinned = ['memory.example.com:443', 'memory.internal'];
    expect(mcpHostAllowed('memory.example.com:443', pinned)).toBe(true);
    expect(mcpHostAllowed('memory.example.com:8443', pinned)).toBe(false);
    expect(mcpHostAllowed('memory.example.com', pinned)).toBe(false);
    expect(mcpHostAllowed('memory.internal:9000', pinned)).toBe(true);
  });
});
