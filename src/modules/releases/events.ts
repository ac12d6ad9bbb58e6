// The release events (catalogue: outbox/events.ts), built from the release as the change leaves it.
import { event, type OutboxEvent } from "../outbox/effects";
import { isoOrNull, type ReleaseEventData } from "../outbox/events";
import type { Release } from "./repo";

function releaseData(r: Release): ReleaseEventData {
  return {
    release_id: r.id,
    product_id: r.productId,
    version: r.version,
    channel: r.channel,
    status: r.status,
    published_at: isoOrNull(r.publishedAt),
  };
}

export function releasePublished(after: Release, at: Date): OutboxEvent {
  return event("release.published", at, releaseData(after));
}

export function releaseYanked(after: Release, at: Date): OutboxEvent {
  return event("release.yanked", at, { ...releaseData(after), reason: after.yankReason });
}

export function releaseUnyanked(after: Release, at: Date): OutboxEvent {
  return event("release.unyanked", at, releaseData(after));
}
