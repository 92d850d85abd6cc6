import type { MemoryType } from '../types';

/** Words that point at the recent past; they switch the recency route on. */
const RECENCY_CUE = /上次|最近|之前|刚才|那天|前几天|这几天|last time|recently|lately|earlier|the other day|\bbefore\b|\bprevious(ly)?\b/i;

/**
 * Query cues → memory types, for the type/metadata route: "推荐一本书" wants what the assistant
 * recommended and what the user likes; "我的目标" wants goals. A query without cues gets no type
 * route (the other routes cover it).
 */
const TYPE_CUES: { cue: RegExp; types: MemoryType[] }[] = [
  { cue: /推荐|建议|介绍|recommend|suggest|advice|advise|tip/i, types: ['assistant_contribution', 'preference'] },
  { cue: /教|方法|怎么做|技巧|taught|teach|method|how (do|did|to)/i, types: ['assistant_contribution'] },
  { cue: /喜欢|爱|偏好|口味|讨厌|不吃|忌口|like|love|prefer|favou?rite|hate|dislike|taste/i, types: ['preference', 'fact'] },
  { cue: /过敏|身体|健康|病|吃什么|午餐|晚餐|早餐|饭|allerg|health|diet|eat|lunch|dinner|breakfast|meal|food/i, types: ['fact', 'preference'] },
  { cue: /目标|计划|打算|想要|goal|plan|aim|want to/i, types: ['goal'] },
  { cue: /问题|困扰|麻烦|卡|故障|超时|慢|报错|problem|issue|trouble|stuck|slow|error|bug|struggl/i, types: ['pain_point'] },
  { cue: /决定|选了|定了|decid|chose|picked/i, types: ['decision'] },
  { cue: /该做什么|做什么|安排|日程|周末|明天|下周|schedule|agenda|weekend|tomorrow|next week|what should i do/i, types: ['event', 'goal', 'pain_point'] },
];

export interface RoutePlan {
  /** Recency route (recently touched memories first). */
  recent: boolean;
  /** Types for the type route; empty: no type route. */
  types: MemoryType[];
}

/** Decides which optional recall routes a query calls for, from cue words only (no I/O). */
export function planRoutes(query: string): RoutePlan {
  const types = new Set<MemoryType>();
  for (const { cue, types: t } of TYPE_CUES) if (cue.test(query)) for (const x of t) types.add(x);
  return { recent: RECENCY_CUE.test(query), types: [...types] };
}
