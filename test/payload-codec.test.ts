import { randomBytes, randomUUID } from 'node:crypto';
import { defaultPayloadConverter, METADATA_ENCODING_KEY, type Payload } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { loadConfig, parseKeyMaterial } from '../src/config';
import { ENCRYPTED_ENCODING, EncryptionCodec, KEY_ID_METADATA_KEY } from '../src/security/payload-codec';
import { DataKeyDestroyedError, MasterKeyring, masterKeyId, PayloadDecryptionError } from '../src/security/payload-keys';
import { ambientSubject, withSubject } from '../src/security/payload-subject';
import { payloadConverter } from '../workflows/shared/payload-converter';
import { encodeSubject, SUBJECT_METADATA_KEY, subjectFromSearchAttributes } from '../workflows/shared/payload-subject';
import { MemoryUserIdKey } from '../workflows/shared/search-attributes';

/** In-memory stand-in for PayloadKeyStore (the PostgreSQL store is covered by payload-encryption.int.test.ts). */
class MemoryKeys {
  readonly byId = new Map<string, Buffer>();
  readonly live = new Map<string, string>();
  readonly destroyed = new Set<string>();
  readonly asked: (string | null)[] = [];

  async encryptionKey(subject: string | null) {
    this.asked.push(subject);
    const owner = subject ?? '<system>';
    let keyId = this.live.get(owner);
    if (!keyId) {
      keyId = randomUUID();
      this.live.set(owner, keyId);
      this.byId.set(keyId, randomBytes(32));
    }
    return { keyId, key: this.byId.get(keyId)! };
  }

  async decryptionKey(keyId: string) {
    if (this.destroyed.has(keyId)) throw new DataKeyDestroyedError(keyId, new Date('2026-01-01T00:00:00Z'));
    const key = this.byId.get(keyId);
    if (!key) throw new PayloadDecryptionError(`data key unknown: ${keyId}`);
    return key;
  }

  destroy(subject: string) {
    const keyId = this.live.get(subject)!;
    this.live.delete(subject);
    this.byId.delete(keyId);
    this.destroyed.add(keyId);
  }
}

const text = (p: Payload) => Buffer.from(p.data ?? []).toString('utf8');
const json = (value: unknown, subject?: string): Payload => {
  const p = defaultPayloadConverter.toPayload(value);
  return subject ? { ...p, metadata: { ...p.metadata, [SUBJECT_METADATA_KEY]: encodeSubject(subject) } } : p;
};
const meta = (p: Payload, key: string) => (p.metadata?.[key] ? Buffer.from(p.metadata[key]!).toString('utf8') : undefined);

describe('EncryptionCodec', () => {
  it('round-trips every payload, and the ciphertext says nothing but its encoding and key id', async () => {
    const keys = new MemoryKeys();
    const codec = new EncryptionCodec(keys);
    const original = [json({ text: '我对花生过敏 peanut-secret' }, 'tenant-a:alice'), json(undefined), defaultPayloadConverter.toPayload(new Uint8Array([0, 1, 2, 255]))];
    const encoded = await codec.encode(original);
    for (const p of encoded) {
      expect(Object.keys(p.metadata!).sort()).toEqual([KEY_ID_METADATA_KEY, METADATA_ENCODING_KEY].sort());
      expect(meta(p, METADATA_ENCODING_KEY)).toBe(ENCRYPTED_ENCODING);
      expect(text(p)).not.toContain('peanut-secret');
      expect(Buffer.from(p.data!).includes(Buffer.from('tenant-a:alice'))).toBe(false);
    }
    const decoded = await codec.decode(encoded);
    // The subject tag was only for the codec: what comes back is what the default converter made.
    expect(decoded[0]!.metadata![SUBJECT_METADATA_KEY]).toBeUndefined();
    expect(defaultPayloadConverter.fromPayload(decoded[0]!)).toEqual({ text: '我对花生过敏 peanut-secret' });
    expect(defaultPayloadConverter.fromPayload(decoded[1]!)).toBeUndefined();
    expect([...(defaultPayloadConverter.fromPayload(decoded[2]!) as Uint8Array)]).toEqual([0, 1, 2, 255]);
  });

  it("encrypts with the tagged subject's key, else the caller's ambient subject, else the system key", async () => {
    const keys = new MemoryKeys();
    const codec = new EncryptionCodec(keys, ambientSubject);
    const [tagged] = await codec.encode([json('a', 'tenant-a:alice')]);
    const [scoped] = await withSubject('tenant-a:bob', () => codec.encode([json('b')]));
    const [both] = await withSubject('tenant-a:bob', () => codec.encode([json('c', 'tenant-a:alice')]));
    const [system] = await codec.encode([json('d')]);
    expect(keys.asked).toEqual(['tenant-a:alice', 'tenant-a:bob', 'tenant-a:alice', null]);
    expect(meta(tagged!, KEY_ID_METADATA_KEY)).toBe(keys.live.get('tenant-a:alice'));
    expect(meta(scoped!, KEY_ID_METADATA_KEY)).toBe(keys.live.get('tenant-a:bob'));
    expect(meta(both!, KEY_ID_METADATA_KEY)).toBe(keys.live.get('tenant-a:alice'));
    expect(meta(system!, KEY_ID_METADATA_KEY)).toBe(keys.live.get('<system>'));
  });

  it('refuses a tampered payload (GCM tag), and one relabelled with another key id', async () => {
    const keys = new MemoryKeys();
    const codec = new EncryptionCodec(keys);
    const [alice] = await codec.encode([json('alice secret', 'tenant-a:alice')]);
    const [bob] = await codec.encode([json('bob secret', 'tenant-a:bob')]);
    for (const index of [1, 14, alice!.data!.length - 20, alice!.data!.length - 1]) {
      const data = new Uint8Array(alice!.data!);
      data[index]! ^= 0x01;
      await expect(codec.decode([{ ...alice!, data }])).rejects.toThrow(/failed authentication/);
    }
    await expect(codec.decode([{ ...alice!, data: alice!.data!.subarray(0, 20) }])).rejects.toThrow(PayloadDecryptionError);
    const relabelled = { ...alice!, metadata: { ...alice!.metadata, [KEY_ID_METADATA_KEY]: bob!.metadata![KEY_ID_METADATA_KEY]! } };
    await expect(codec.decode([relabelled])).rejects.toThrow(/failed authentication/);
  });

  it('refuses to decrypt with a wrong key', async () => {
    const keys = new MemoryKeys();
    const [p] = await new EncryptionCodec(keys).encode([json('x', 'tenant-a:alice')]);
    const keyId = keys.live.get('tenant-a:alice')!;
    keys.byId.set(keyId, randomBytes(32));
    await expect(new EncryptionCodec(keys).decode([p!])).rejects.toThrow(/failed authentication: tampered with, or encrypted under another key/);
  });

  it('fails clearly once the data key was destroyed, and other users still decode', async () => {
    const keys = new MemoryKeys();
    const codec = new EncryptionCodec(keys);
    const [alice, bob] = await codec.encode([json('alice secret', 'tenant-a:alice'), json('bob secret', 'tenant-a:bob')]);
    keys.destroy('tenant-a:alice');
    await expect(codec.decode([alice!])).rejects.toThrow(DataKeyDestroyedError);
    await expect(codec.decode([alice!])).rejects.toThrow(/data key destroyed/);
    expect(defaultPayloadConverter.fromPayload((await codec.decode([bob!]))[0]!)).toBe('bob secret');
    // A payload for the purged user written afterwards gets a new key.
    const [again] = await codec.encode([json('new', 'tenant-a:alice')]);
    expect(meta(again!, KEY_ID_METADATA_KEY)).not.toBe(meta(alice!, KEY_ID_METADATA_KEY));
  });

  it('passes unencrypted payloads through unchanged (histories recorded before encryption), and never encrypts twice', async () => {
    const codec = new EncryptionCodec(new MemoryKeys());
    const plain = json({ old: 'history' });
    expect(await codec.decode([plain])).toEqual([plain]);
    const once = await codec.encode([json('y')]);
    expect(await codec.encode(once)).toEqual(once);
    await expect(codec.decode([{ metadata: { [METADATA_ENCODING_KEY]: Buffer.from(ENCRYPTED_ENCODING) }, data: new Uint8Array([1]) }])).rejects.toThrow(/without "encryption-key-id"/);
  });
});

describe('MasterKeyring', () => {
  const dataKey = randomBytes(32);

  it('wraps data keys bound to their key id, and names master keys without revealing them', () => {
    const master = randomBytes(32);
    const ring = new MasterKeyring(master);
    const { wrapped, masterKeyId: id } = ring.wrap('k1', dataKey);
    expect(id).toBe(masterKeyId(master));
    expect(id).toMatch(/^mk-[0-9a-f]{16}$/);
    expect(ring.unwrap('k1', wrapped, id)).toEqual(dataKey);
    expect(() => ring.unwrap('k2', wrapped, id)).toThrow(/failed authentication/);
  });

  it('unwraps with a retired key after a rotation, refuses a wrong or unknown master key', () => {
    const old = randomBytes(32);
    const { wrapped, masterKeyId: oldId } = new MasterKeyring(old).wrap('k1', dataKey);
    const rotated = new MasterKeyring(randomBytes(32), [old]);
    expect(rotated.currentId).not.toBe(oldId);
    expect(rotated.unwrap('k1', wrapped, oldId)).toEqual(dataKey);
    expect(() => new MasterKeyring(randomBytes(32)).unwrap('k1', wrapped, oldId)).toThrow(/PAYLOAD_MASTER_KEYS_OLD/);
    const impostor = randomBytes(32);
    expect(() => new MasterKeyring(impostor).unwrap('k1', wrapped, masterKeyId(impostor))).toThrow(/wrong master key/);
  });
});

describe('payload subject', () => {
  it("the sandbox converter adds nothing outside a workflow and converts like the SDK's default", () => {
    const p = payloadConverter.toPayload({ a: 1 });
    expect(p).toEqual(defaultPayloadConverter.toPayload({ a: 1 }));
    expect(payloadConverter.fromPayload(p)).toEqual({ a: 1 });
  });

  it('finds the user key in every shape of search attributes', () => {
    expect(subjectFromSearchAttributes([{ key: MemoryUserIdKey, value: 'tenant-a:alice' }])).toBe('tenant-a:alice');
    expect(subjectFromSearchAttributes(undefined, { MemoryUserId: ['tenant-a:bob'] })).toBe('tenant-a:bob');
    expect(subjectFromSearchAttributes([], {})).toBeUndefined();
  });

  it('withSubject scopes nest and end with their callback', async () => {
    expect(ambientSubject()).toBeUndefined();
    await withSubject('u1', async () => {
      await Promise.resolve();
      expect(ambientSubject()).toBe('u1');
      withSubject('u2', () => expect(ambientSubject()).toBe('u2'));
      expect(ambientSubject()).toBe('u1');
    });
    expect(ambientSubject()).toBeUndefined();
  });
});

describe('payload encryption config', () => {
  it('is on by default with the fixed development master key; a given key is hex or base64', () => {
    const dev = loadConfig({});
    expect(dev.payloads.encryption).toBe(true);
    expect(dev.payloads.masterKeyIsDevDefault).toBe(true);
    expect(dev.payloads.masterKey).toHaveLength(32);
    expect(loadConfig({}).payloads.masterKey).toEqual(dev.payloads.masterKey);
    const key = randomBytes(32);
    expect(loadConfig({ PAYLOAD_MASTER_KEY: key.toString('hex') }).payloads.masterKey).toEqual(key);
    expect(loadConfig({ PAYLOAD_MASTER_KEY: key.toString('base64') }).payloads).toMatchObject({ masterKey: key, masterKeyIsDevDefault: false });
    expect(parseKeyMaterial(key.toString('base64url'))).toEqual(key);
    expect(loadConfig({ PAYLOAD_MASTER_KEYS_OLD: `${randomBytes(32).toString('hex')}, ${randomBytes(32).toString('base64')}` }).payloads.oldMasterKeys).toHaveLength(2);
  });

  // Everything else production asks for, so each check below meets only its own refusal.
  const production = { NODE_ENV: 'production', API_KEYS: `acme:${'k'.repeat(32)}`, SECRET_KEY: 's'.repeat(32), PAYLOAD_MASTER_KEY: randomBytes(32).toString('base64') };

  it('refuses short keys, and turning encryption off in production', () => {
    expect(() => loadConfig({ PAYLOAD_MASTER_KEY: randomBytes(16).toString('base64') })).toThrow(/PAYLOAD_MASTER_KEY/);
    expect(() => loadConfig({ PAYLOAD_MASTER_KEYS_OLD: 'abc' })).toThrow(/PAYLOAD_MASTER_KEYS_OLD/);
    expect(loadConfig({ PAYLOAD_ENCRYPTION: 'off' }).payloads.encryption).toBe(false);
    expect(() => loadConfig({ ...production, PAYLOAD_ENCRYPTION: 'off' })).toThrow(/PAYLOAD_ENCRYPTION/);
  });

  it('has a development codec token, none in production unless given, and admits the Temporal UI origin', () => {
    expect(loadConfig({}).codec.authToken).toBeDefined();
    expect(loadConfig(production).codec.authToken).toBeUndefined();
    expect(() => loadConfig({ CODEC_AUTH_TOKEN: 'short' })).toThrow(/CODEC_AUTH_TOKEN/);
    expect(loadConfig({ TEMPORAL_UI_PORT: '9000' }).codec.corsOrigins).toContain('http://127.0.0.1:9000');
    expect(loadConfig({ CODEC_CORS_ORIGINS: 'https://temporal.example.com/' }).codec.corsOrigins).toEqual(['https://temporal.example.com']);
  });
});
