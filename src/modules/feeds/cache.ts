// Rendered feeds, cached. Every installed client polls its feed at start-up, and a feed changes only
// when a release is published, yanked or unyanked, or the product is edited; each of those bumps the
// product's release generation in its own transaction. Keys carry that generation, read from the
// database on every request, so a node never serves a document older than the committed state (other
// nodes' changes included). Bounded LRU.
export interface FeedCache {
  get(key: string): string | undefined;
  set(key: string, body: string): void;
}

export function createFeedCache(maxEntries = 512): FeedCache {
  const entries = new Map<string, string>();
  return {
    get(key) {
      const body = entries.get(key);
      if (body !== undefined) {
        // Refresh recency: Map iteration order is insertion order.
        entries.delete(key);
        entries.set(key, body);
      }
      return body;
    },
    set(key, body) {
      entries.delete(key);
      entries.set(key, body);
      if (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
    },
  };
}
