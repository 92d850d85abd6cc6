import { createHash } from 'node:crypto';
import { Embeddings } from '@langchain/core/embeddings';
import { tokenizeForIndex } from '../text/jieba';

/**
 * LAST-RESORT lexical embedder: feature hashing of segmented tokens. It has no notion of meaning
 * ("忌口" is not near "过敏"); it exists so the service can run where no embedding model is
 * available at all, and is named as such in the README.
 */
export class HashingEmbeddings extends Embeddings {
  constructor(private readonly dimensions: number) {
    super({});
  }

  override async embedQuery(text: string): Promise<number[]> {
    return this.embed(text);
  }

  override async embedDocuments(texts: string[]): Promise<number[][]> {
    return texts.map((t) => this.embed(t));
  }

  private embed(text: string): number[] {
    const v = new Array<number>(this.dimensions).fill(0);
    for (const token of tokenizeForIndex(text)) {
      const h = createHash('md5').update(token).digest();
      const slot = h.readUInt32LE(0) % this.dimensions;
      v[slot]! += h[4]! & 1 ? 1 : -1;
    }
    const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0)) || 1;
    return v.map((x) => x / norm);
  }
}
