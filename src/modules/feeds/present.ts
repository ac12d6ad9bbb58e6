// Renders the three public feed documents. They are the formats Sparkle/WinSparkle, our JSON
// clients and Tauri define (spec design rule 3: not enveloped); field facts in
// /work/shared/reference/update-formats.md and docs/updates.md.
import { XMLBuilder } from "fast-xml-parser";
import type { Product } from "../products/repo";
import type { FeedEntry, Platform } from "../releases/repo";
import { sparkleVersion } from "../releases/domain";
import { stripXmlIllegalDeep } from "../../shared/xml-text";
import { isCritical, rfc822, sparkleOs } from "./domain";

/** Sparkle and WinSparkle match names by this exact URI (http, not https; §1.1). */
export const SPARKLE_NS = "http://www.andymatuschak.org/xml-namespaces/sparkle";

/**
 * Keyward's own appcast elements (docs/updates.md, "feed.xml"). A namespace URI is a name, not an
 * address: it must never change, and nothing fetches it. Sparkle and WinSparkle match names by
 * namespace URI and ignore elements of namespaces they do not know.
 */
export const KEYWARD_NS = "https://keyward.dev/xml-namespaces/keyward";

export interface FeedView {
  product: Product;
  platform: Platform;
  entries: FeedEntry[];
  /** Canonical URL of this feed (channel <link>). */
  feedUrl: string;
  /** Stable Keyward download URL of an entry's artifact. */
  downloadUrl(entry: FeedEntry): string;
}

// XMLBuilder escapes text and attribute values and splits "]]>" inside CDATA, so release notes or
// product names can never break the document (one bad item fails a whole Sparkle feed, §6). What no
// escaping can carry, the characters XML 1.0 forbids, is stripped from every value before building
// (input validation refuses them, but rows stored earlier may hold them).
const builder = new XMLBuilder({
  ignoreAttributes: false,
  attributeNamePrefix: "@_",
  cdataPropName: "#cdata",
  format: true,
  indentBy: "  ",
  suppressEmptyNode: true,
});

function appcastItem(view: FeedView, e: FeedEntry) {
  const { release, artifact } = e;
  const floor = view.product.minimumSupportedVersion;
  const os = sparkleOs(view.platform);
  return {
    title: `Version ${release.version}`,
    pubDate: rfc822(release.publishedAt!),
    // Sparkle compares this with CFBundleVersion and ignores text after "-" (§1.4).
    "sparkle:version": sparkleVersion(release.version),
    "sparkle:shortVersionString": release.version,
    // Missing channel = Sparkle's default channel, which every client follows: only stable has none.
    ...(release.channel !== "stable" ? { "sparkle:channel": release.channel } : {}),
    ...(release.minimumOsVersion ? { "sparkle:minimumSystemVersion": release.minimumOsVersion } : {}),
    // Critical only for hosts below the floor (see isCritical).
    ...(isCritical(release.version, floor) ? { "sparkle:criticalUpdate": { "@_sparkle:version": sparkleVersion(floor!) } } : {}),
    ...(release.notes ? { description: { "#cdata": release.notes } } : {}),
    enclosure: {
      "@_url": view.downloadUrl(e),
      "@_length": artifact.fileSize!,
      // Not read by Sparkle; the value its docs and generate_appcast use (§1.2).
      "@_type": "application/octet-stream",
      "@_sparkle:edSignature": artifact.edSignature!,
      ...(os ? { "@_sparkle:os": os } : {}),
    },
  };
}

/**
 * Sparkle 2 / WinSparkle appcast (RSS 2.0), items newest first. The product's floor is on the
 * channel in Keyward's namespace (spec: feeds embed the minimum supported version), also when no
 * item is listed; Sparkle itself sees it only through `sparkle:criticalUpdate` on the items.
 */
export function renderAppcast(view: FeedView): string {
  const p = view.product;
  const doc = {
    "?xml": { "@_version": "1.0", "@_encoding": "utf-8" },
    rss: {
      "@_version": "2.0",
      "@_xmlns:sparkle": SPARKLE_NS,
      "@_xmlns:keyward": KEYWARD_NS,
      channel: {
        title: p.name,
        link: view.feedUrl,
        description: `Updates for ${p.name} (${view.platform})`,
        ...(p.minimumSupportedVersion !== null ? { "keyward:minimumSupportedVersion": p.minimumSupportedVersion } : {}),
        ...(p.minimumSupportedMessage !== null ? { "keyward:minimumSupportedMessage": p.minimumSupportedMessage } : {}),
        item: view.entries.map((e) => appcastItem(view, e)),
      },
    },
  };
  return builder.build(stripXmlIllegalDeep(doc));
}

/**
 * One feed.json entry; every field is documented in docs/updates.md ("feed.json"). JSON can carry
 * any character, but the text is cleaned as in the appcast so that every feed shows the same notes
 * and message.
 */
export function feedJsonEntry(view: FeedView, e: FeedEntry) {
  const { release, artifact } = e;
  return stripXmlIllegalDeep({
    version: release.version,
    channel: release.channel,
    pub_date: release.publishedAt!.toISOString(),
    notes: release.notes,
    minimum_os_version: release.minimumOsVersion,
    platform: artifact.platform,
    url: view.downloadUrl(e),
    filename: artifact.filename,
    content_type: artifact.contentType,
    sha256: artifact.sha256!,
    size: artifact.fileSize!,
    ed_signature: artifact.edSignature!,
    minisign_signature: artifact.minisignSignature!,
    signing_kid: artifact.signingKid!,
    critical: isCritical(release.version, view.product.minimumSupportedVersion),
    minimum_supported_version: view.product.minimumSupportedVersion,
    minimum_supported_message: view.product.minimumSupportedMessage,
  });
}

export function renderFeedJson(view: FeedView) {
  return view.entries.map((e) => feedJsonEntry(view, e));
}

/**
 * Tauri dynamic-server answer (§2.3): `signature` is the STANDARD base64 of the whole 4-line
 * minisign text (§2.4, the same string `tauri signer sign` writes to .sig). The floor fields appear
 * only when the product sets them.
 */
export function renderTauriManifest(view: FeedView, e: FeedEntry) {
  const { release, artifact } = e;
  const p = view.product;
  // Text cleaned as in the other feeds, so the three agree.
  return stripXmlIllegalDeep({
    version: release.version,
    pub_date: release.publishedAt!.toISOString(),
    url: view.downloadUrl(e),
    signature: Buffer.from(artifact.minisignSignature!, "utf8").toString("base64"),
    notes: release.notes,
    ...(p.minimumSupportedVersion !== null ? { minimum_supported_version: p.minimumSupportedVersion } : {}),
    ...(p.minimumSupportedMessage !== null ? { minimum_supported_message: p.minimumSupportedMessage } : {}),
  });
}

/** Tauri's "no update" is 204; any non-2xx would count as a failed endpoint (§2.3). */
export function tauriResponse(found: { view: FeedView; entry: FeedEntry } | null, headers: Record<string, string>): Response {
  if (!found) return new Response(null, { status: 204, headers });
  return Response.json(renderTauriManifest(found.view, found.entry), { headers });
}
