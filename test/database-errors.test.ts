import { describe, expect, it } from 'vitest';
import { databaseErrorCode, ErrorCode, isUserGoneViolation } from '../src/core/errors';

describe('databaseErrorCode', () => {
  it('names PostgreSQL out of reach as databaseUnavailable and a statement timeout as dependencyTimeout', () => {
    expect(databaseErrorCode(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).toBe(ErrorCode.databaseUnavailable);
    expect(databaseErrorCode(Object.assign(new Error('the database system is starting up'), { code: '57P03' }))).toBe(ErrorCode.databaseUnavailable);
    expect(databaseErrorCode(Object.assign(new Error('connection failure'), { code: '08006' }))).toBe(ErrorCode.databaseUnavailable);
    expect(databaseErrorCode(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED', syscall: 'connect' }))).toBe(ErrorCode.databaseUnavailable);
    expect(databaseErrorCode(new Error('Connection terminated unexpectedly'))).toBe(ErrorCode.databaseUnavailable);
    // pg-pool's connectionTimeoutMillis while every client is stuck on a hung server (SIGSTOP, a
    // black-holed network): this reached clients as 500 internal_error.
    expect(databaseErrorCode(new Error('timeout exceeded when trying to connect'))).toBe(ErrorCode.databaseUnavailable);
    expect(databaseErrorCode(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }))).toBe(ErrorCode.dependencyTimeout);
    // pg's client-side query_timeout, the only bound on a statement sent to a server that hangs.
    expect(databaseErrorCode(new Error('Query read timeout'))).toBe(ErrorCode.dependencyTimeout);
  });

  it('leaves other errors alone: a constraint violation or a bug is not an outage', () => {
    expect(databaseErrorCode(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBeUndefined();
    expect(databaseErrorCode(new TypeError('x is undefined'))).toBeUndefined();
    expect(databaseErrorCode(undefined)).toBeUndefined();
  });
});

describe('isUserGoneViolation', () => {
  it('recognises a write that lost its user to a purge, and nothing else', () => {
    const fk = (detail: string) => Object.assign(new Error('insert or update on table "conversations" violates foreign key constraint "conversations_user_id_fkey"'), { code: '23503', detail });
    expect(isUserGoneViolation(fk('Key (user_id)=(dev:abc) is not present in table "users".'))).toBe(true);
    expect(isUserGoneViolation(fk('Key (memory_id)=(x) is not present in table "memories".'))).toBe(false);
    expect(isUserGoneViolation(Object.assign(new Error('duplicate key'), { code: '23505', detail: 'is not present in table "users"' }))).toBe(false);
    expect(isUserGoneViolation(undefined)).toBe(false);
  });

  it('reads the constraint, so a server answering in another language is understood too', () => {
    const german = (constraint: string) => Object.assign(new Error('Einfügen oder Aktualisieren verletzt Fremdschlüssel-Constraint'), { code: '23503', constraint, detail: 'Schlüssel (user_id)=(dev:abc) ist nicht in Tabelle »users« vorhanden.' });
    expect(isUserGoneViolation(german('messages_user_id_fkey'))).toBe(true);
    expect(isUserGoneViolation(german('memory_entities_memory_id_fkey'))).toBe(false);
  });
});
