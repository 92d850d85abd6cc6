import type { DataConverter } from '@temporalio/common';
import type { Queryable } from '../adapters/postgres/pool';
import type { AppConfig } from '../config';
import { EncryptionCodec } from './payload-codec';
import { MasterKeyring, PayloadKeyStore } from './payload-keys';
import { ambientSubject, crossesToCaller } from './payload-subject';

export interface PayloadEncryption {
  keys: PayloadKeyStore;
  codec: EncryptionCodec;
  /** For Client, Worker and replay: the codec only — the sandbox's payload converter is in the workflow bundle. */
  dataConverter: DataConverter;
}

/** Builds the key store and codec from config; undefined when PAYLOAD_ENCRYPTION=off (development only). */
export function createPayloadEncryption(db: Queryable, config: AppConfig['payloads']): PayloadEncryption | undefined {
  if (!config.encryption) return undefined;
  const keys = new PayloadKeyStore(db, new MasterKeyring(config.masterKey, config.oldMasterKeys), { cacheTtlMs: config.keyCacheSeconds * 1000 });
  const codec = new EncryptionCodec(keys, ambientSubject, crossesToCaller);
  return { keys, codec, dataConverter: { payloadCodecs: [codec] } };
}
