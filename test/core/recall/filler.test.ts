import { describe, expect, it } from 'vitest';
import { isAcknowledgement, isFillerExchange } from '../../../src/core/recall/filler';

const exchange = (user: string | undefined, assistant: string) => ({
  ...(user === undefined ? {} : { user: { content: user } }),
  assistant: { content: assistant },
}) as Parameters<typeof isFillerExchange>[0];

describe('filler: acknowledgements', () => {
  it('reads agreement, intention and hope as acknowledgements, in English and Chinese', () => {
    for (const t of ['will do', 'ok I will try', 'Ha, true', 'fingers crossed!', 'yes please', 'good call', '好主意，我去看看', '希望吧', '我考虑考虑', '嗯嗯', '没问题，回头再说'])
      expect(isAcknowledgement(t), t).toBe(true);
  });

  it('keeps a line that states something, even after an acknowledgement', () => {
    for (const t of ["Good call, I'll look for one this week", 'hope so. leaving for Boulder early tomorrow', '我对芒果过敏', '好，明早提醒我', '行，我明天去医院', "I'm allergic to shellfish", 'yeah I feel bad I waited so long'])
      expect(isAcknowledgement(t), t).toBe(false);
  });

  it('drops an exchange whose user line only acknowledges, whatever the reply', () => {
    expect(isFillerExchange(exchange('will do', 'Hope they sort it out quickly.'))).toBe(true);
    expect(isFillerExchange(exchange('Filed a ticket just now', 'Good. In the meantime, try exporting smaller frames.'))).toBe(false);
  });

  it('judges an exchange without a user line by its reply, as before', () => {
    expect(isFillerExchange(exchange(undefined, 'Good morning!'))).toBe(true);
    expect(isFillerExchange(exchange(undefined, 'You mentioned the dentist on Tuesday.'))).toBe(false);
  });
});
