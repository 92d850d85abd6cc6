// The package ships JavaScript only; its one export, typed here.
declare module 'wink-porter2-stemmer' {
  /** The Porter2 stem of a lowercased English word. */
  export default function stem(word: string): string;
}
