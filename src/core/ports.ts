/**
 * The ports the services talk to stores and models through, split by capability under ports/;
 * this module re-exports them all so importers name one place.
 */
export type * from './ports/memory';
export type * from './ports/lifecycle';
export type * from './ports/conversation';
export type * from './ports/recall';
export type * from './ports/proactive';
export type * from './ports/privacy';
export type * from './ports/account';
export type * from './ports/transaction';
