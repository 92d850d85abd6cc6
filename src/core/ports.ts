/**
 * The ports the services talk to stores and models through, one file per capability under ports/.
 * Importers name the capability's file; this re-export stays for branches that still import it
 * from here while they merge.
 */
export type * from './ports/memory';
export type * from './ports/lifecycle';
export type * from './ports/conversation';
export type * from './ports/recall';
export type * from './ports/proactive';
export type * from './ports/privacy';
export type * from './ports/account';
export type * from './ports/transaction';
