import { describe, expect, it } from 'vitest';
import { parseStartupTimings, phaseDurations, TIMINGS_PREFIX } from '../src/cli/startup-timings';

// `--timings` tells where a start went: each phase from the mark before it, in the order they happened.

describe('startup timings', () => {
  it('gives each phase the time since the previous mark, ignoring other marks', () => {
    const marks = [
      { name: 'startup:config', startTime: 1500 },
      { name: 'startup:imports', startTime: 1200.4 },
      { name: 'someone-else', startTime: 1300 },
      { name: 'startup:polling', startTime: 4000 },
    ];
    expect(phaseDurations(marks)).toEqual({ imports: 1200, config: 300, polling: 2500 });
  });

  it('reads back the line it prints and nothing else', () => {
    expect(parseStartupTimings(`[worker] ${TIMINGS_PREFIX}{"imports":12,"total":40,"note":"x"}`)).toEqual({ imports: 12, total: 40 });
    expect(parseStartupTimings('worker polling task queue "q"')).toBeUndefined();
    expect(parseStartupTimings(`${TIMINGS_PREFIX}{"imports":`)).toBeUndefined();
    expect(parseStartupTimings(`${TIMINGS_PREFIX}null`)).toBeUndefined();
  });
});
