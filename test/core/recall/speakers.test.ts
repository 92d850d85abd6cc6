import { describe, expect, it } from 'vitest';
import { lineSpeaker, speakerFocus, speakersNamed, speaksOfSelf, withoutSpeaker } from '../../../src/core/recall/speakers';

describe('lineSpeaker', () => {
  it('reads a leading "Name:" in Latin and "名字：" in Han script', () => {
    expect(lineSpeaker('Ana: I signed up for a pottery class.')).toBe('Ana');
    expect(lineSpeaker('Ana Li: we went camping')).toBe('Ana Li');
    expect(lineSpeaker('小林：我养了一只猫')).toBe('小林');
  });

  it('finds no speaker in a line without one, nor in a colon mid-sentence', () => {
    expect(lineSpeaker('I went camping with the kids.')).toBeUndefined();
    expect(lineSpeaker('The plan: camping on Friday')).toBeUndefined();
    expect(lineSpeaker('昨天我们去露营了：很开心')).toBeUndefined();
  });

  it('strips the speaker from the text', () => {
    expect(withoutSpeaker('Ana: hi')).toBe('hi');
    expect(withoutSpeaker('hi: there')).toBe('hi: there');
  });
});

describe('speakersNamed', () => {
  const speakers = ['Ana', 'Jon Park', '小林'];
  it('matches a speaker named as a whole word, possessive included, or by the first name', () => {
    expect(speakersNamed('What books has Ana read?', speakers)).toEqual(new Set(['Ana']));
    expect(speakersNamed("What do Ana's kids like?", speakers)).toEqual(new Set(['Ana']));
    expect(speakersNamed('Where did Jon go?', speakers)).toEqual(new Set(['Jon Park']));
    expect(speakersNamed('小林养了什么宠物', speakers)).toEqual(new Set(['小林']));
  });

  it('does not match a name inside another word, nor a query naming no speaker', () => {
    expect(speakersNamed('Where is Anaheim?', speakers)).toEqual(new Set());
    expect(speakersNamed('What did I read last week?', speakers)).toEqual(new Set());
  });
});

describe('speaksOfSelf', () => {
  it('is true for a line that asks nothing, or states something in the first person beside its question', () => {
    expect(speaksOfSelf('Ana: Luna and Oliver! They are so sweet.')).toBe(true);
    expect(speaksOfSelf('Ana: I just signed up for a pottery class. What about you?')).toBe(true);
    expect(speaksOfSelf('小林：我昨天去爬山了，你呢？')).toBe(true);
  });

  it('is false for a line that only asks the other side about themselves', () => {
    expect(speaksOfSelf("Ana: Wow, that rocks! What's the main idea of your art?")).toBe(false);
    expect(speaksOfSelf('Ana: Cool! What type of music do you play?')).toBe(false);
    expect(speaksOfSelf('小林：你去哪儿了？')).toBe(false);
  });
});

describe('speakerFocus', () => {
  const lines = new Map(
    Object.entries({
      a1: { content: 'Ana: Cool! What instruments do you play?' },
      b1: { content: 'Ben: Guitar, mostly blues.' },
      a2: { content: 'Ana: I play the violin when I need to relax.' },
      a3: { content: 'Ana: I took up the clarinet last year. Do you like it?' },
      b2: { content: 'Ben: Thanks, Ana! That is lovely.' },
    }),
  );

  it('for a query about one speaker: what that speaker told is vouched for, the questions they only asked rank nothing', () => {
    const focus = speakerFocus('What instruments does Ana play?', lines);
    expect(focus).toEqual({ tells: [new Set(['a2'])], onlyAsks: new Set(['a1']) });
  });

  it('a line that tells and then asks back is neither vouched for nor dropped', () => {
    const focus = speakerFocus('What does Ana play?', lines)!;
    expect(focus.tells[0]!.has('a3')).toBe(false);
    expect(focus.onlyAsks.has('a3')).toBe(false);
  });

  it('for a query about both people of a dialogue: the telling lines of each vouch apart, and no question is dropped', () => {
    const focus = speakerFocus('What have Ana and Ben both played?', lines);
    expect(focus).toEqual({ tells: [new Set(['a2']), new Set(['b1', 'b2'])], onlyAsks: new Set() });
  });

  it('is off for a query naming no speaker, over lines without speakers, or when the one speaker named is alone in the lines', () => {
    expect(speakerFocus('What instruments are played?', lines)).toBeUndefined();
    expect(speakerFocus('What does Ana play?', new Map([['a', { content: 'Ana: I play the violin.' }]]))).toBeUndefined();
    expect(speakerFocus('What does Ana play?', new Map([['x', { content: 'I play the violin.' }]]))).toBeUndefined();
  });

  it('works the same for a Chinese transcript', () => {
    const zh = new Map(
      Object.entries({
        l1: { content: '小林：你养宠物吗？' },
        w1: { content: '小王：养了一只猫。' },
        l2: { content: '小林：我家有两只狗，叫豆豆和球球。' },
      }),
    );
    expect(speakerFocus('小林养了什么宠物', zh)).toEqual({ tells: [new Set(['l2'])], onlyAsks: new Set(['l1']) });
    expect(speakerFocus('小林和小王都养了什么宠物', zh)).toEqual({ tells: [new Set(['l2']), new Set(['w1'])], onlyAsks: new Set() });
  });
});
