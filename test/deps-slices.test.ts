import { readFileSync } from 'node:fs';
import ts from 'typescript';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type {
  AccountPorts,
  ConversationPorts,
  LifecyclePorts,
  MemoryPorts,
  PersonaPorts,
  PrivacyPorts,
  ProactivePorts,
  RecallPorts,
  ServiceDeps,
  SharedPorts,
} from '../src/shared/deps';

/** The slices of ServiceDeps by name, as types (checked by tsc) and as the interface names in the file (checked at run time). */
interface Slices {
  SharedPorts: SharedPorts;
  AccountPorts: AccountPorts;
  LifecyclePorts: LifecyclePorts;
  MemoryPorts: MemoryPorts;
  PersonaPorts: PersonaPorts;
  ProactivePorts: ProactivePorts;
  ConversationPorts: ConversationPorts;
  RecallPorts: RecallPorts;
  PrivacyPorts: PrivacyPorts;
}
const SLICES: (keyof Slices)[] = ['SharedPorts', 'AccountPorts', 'LifecyclePorts', 'MemoryPorts', 'PersonaPorts', 'ProactivePorts', 'ConversationPorts', 'RecallPorts', 'PrivacyPorts'];

type SliceKeys = { [S in keyof Slices]: keyof Slices[S] }[keyof Slices];
/** Keys a slice shares with any other slice: never when every key has one owner. */
type Overlaps = { [S in keyof Slices]: keyof Slices[S] & { [T in Exclude<keyof Slices, S>]: keyof Slices[T] }[Exclude<keyof Slices, S>] }[keyof Slices];

/** The members of each interface declared in src/shared/deps.ts, and what each extends, read from the source. */
function declaredInterfaces(): Map<string, { members: string[]; extends: string[] }> {
  const file = ts.createSourceFile('deps.ts', readFileSync('src/shared/deps.ts', 'utf8'), ts.ScriptTarget.ES2022, true);
  const found = new Map<string, { members: string[]; extends: string[] }>();
  for (const node of file.statements) {
    if (!ts.isInterfaceDeclaration(node)) continue;
    found.set(node.name.text, {
      members: node.members.flatMap((m) => (m.name && ts.isIdentifier(m.name) ? [m.name.text] : [])),
      extends: (node.heritageClauses ?? []).flatMap((h) => h.types.map((t) => t.expression.getText(file))),
    });
  }
  return found;
}

describe('ServiceDeps by capability (src/shared/deps.ts)', () => {
  it('is exactly the slices plus config, and no key sits in two slices (type level)', () => {
    expectTypeOf<SliceKeys | 'config'>().toEqualTypeOf<keyof ServiceDeps>();
    expectTypeOf<Overlaps>().toEqualTypeOf<never>();
    // Each slice keeps the same field types ServiceDeps has: narrowing a use case to it is a type change only.
    expectTypeOf<ServiceDeps>().toMatchTypeOf<Slices[keyof Slices]>();
  });

  it('puts every key of ServiceDeps in exactly one slice, and ServiceDeps adds only config (as declared)', () => {
    const declared = declaredInterfaces();
    const service = declared.get('ServiceDeps');
    expect(service?.extends.sort()).toEqual([...SLICES].sort());
    expect(service?.members).toEqual(['config']);

    const owners = new Map<string, string[]>();
    for (const slice of SLICES) {
      const members = declared.get(slice)?.members ?? [];
      expect(members.length, `${slice} declares no port`).toBeGreaterThan(0);
      for (const key of members) owners.set(key, [...(owners.get(key) ?? []), slice]);
    }
    expect([...owners].filter(([, slices]) => slices.length !== 1)).toEqual([]);
    // Every interface of the file is a slice or ServiceDeps itself: a new bag of ports must be one of the slices.
    expect([...declared.keys()].filter((name) => name !== 'ServiceDeps' && !SLICES.includes(name as keyof Slices))).toEqual([]);
    // The ports that crossed capabilities went to their owner.
    expect(owners.get('embedder')).toEqual(['MemoryPorts']);
    expect(owners.get('vectors')).toEqual(['MemoryPorts']);
    expect(owners.get('episodes')).toEqual(['ConversationPorts']);
    expect(owners.get('settings')).toEqual(['AccountPorts']);
  });
});
