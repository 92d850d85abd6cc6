import { describe, expect, it } from 'vitest';
import { graphLines, hopKeys } from '../../../src/core/recall/entity-lines';
import type { EntityLines } from '../../../src/core/ports/recall';

const line = (id: string, ...keys: string[]) => ({ conversationId: 'c', messageId: id, keys });
const sorted = (set: Set<string>) => [...set].map((k) => k.split(/\W/u).pop()).sort();

describe('the graph over exchanges: seeds, one hop, the lines reached', () => {
  const sister: EntityLines = { key: 'kin:sister', lines: 2, found: [line('m1', 'kin:sister', 'lisbon'), line('m2', 'kin:sister', 'pottery', 'lisbon')] };
  const lisbon: EntityLines = { key: 'lisbon', lines: 3, found: [line('m1', 'kin:sister', 'lisbon'), line('m2', 'kin:sister', 'pottery', 'lisbon'), line('m3', 'lisbon')] };
  const pottery: EntityLines = { key: 'pottery', lines: 2, found: [line('m2', 'kin:sister', 'pottery', 'lisbon'), line('m4', 'pottery')] };

  it('hops to the entities most often named beside the seeds, never back to a seed', () => {
    expect(hopKeys([sister], { hubLines: 40, fanOut: 8 })).toEqual(['lisbon', 'pottery']);
    expect(hopKeys([sister], { hubLines: 40, fanOut: 1 })).toEqual(['lisbon']);
    expect(hopKeys([sister, lisbon], { hubLines: 40, fanOut: 8 })).toEqual(['pottery']);
  });

  it('walks through no hub: a seed named in too many lines leads nowhere', () => {
    expect(hopKeys([{ ...sister, lines: 41 }], { hubLines: 40, fanOut: 8 })).toEqual([]);
  });

  it('reaches the seeds\' lines and the hop\'s, but not through a hub, and nothing without seeds', () => {
    expect(sorted(graphLines([sister], [lisbon, pottery], { hubLines: 40 }))).toEqual(['m1', 'm2', 'm3', 'm4']);
    expect(sorted(graphLines([sister], [{ ...lisbon, lines: 500 }], { hubLines: 40 }))).toEqual(['m1', 'm2']);
    expect(graphLines([], [lisbon], { hubLines: 40 }).size).toBe(0);
  });
});
