// UUIDv7: time-ordered ids keep B-tree inserts local (DECISIONS: IDs).
export function newId(): string {
  return Bun.randomUUIDv7();
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export function isUuid(s: string): boolean {
  return UUID.test(s);
}
