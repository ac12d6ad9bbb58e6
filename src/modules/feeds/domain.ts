// Pure feed rules: the critical-update floor, Tauri's platform names, Sparkle's date format.
import { compareVersions } from "../../shared/semver";
import type { Platform } from "../releases/repo";

/**
 * The product's minimum_supported_version is a floor: hosts below it are unsupported and must update.
 * The releases that get them back into support are the ones AT OR ABOVE the floor, so those are the
 * critical ones — for hosts below the floor only (the appcast scopes this with
 * `<sparkle:criticalUpdate sparkle:version="FLOOR"/>`, update-formats.md §1.2). Releases below the
 * floor are never critical: installing one would leave the host unsupported.
 */
export function isCritical(version: string, minimumSupportedVersion: string | null): boolean {
  return minimumSupportedVersion !== null && compareVersions(version, minimumSupportedVersion) >= 0;
}

/** Tauri's `{{target}}-{{arch}}` names (update-formats.md §7), accepted as aliases by upgrade.json. */
export const TAURI_PLATFORM_ALIASES = {
  "darwin-aarch64": "darwin-arm64",
  "darwin-x86_64": "darwin-x64",
  "windows-aarch64": "windows-arm64",
  "windows-x86_64": "windows-x64",
  "linux-aarch64": "linux-arm64",
  "linux-x86_64": "linux-x64",
  "linux-armv7": "linux-armhf",
} as const satisfies Record<string, Platform>;

export function canonicalPlatform(p: Platform | keyof typeof TAURI_PLATFORM_ALIASES): Platform {
  return p in TAURI_PLATFORM_ALIASES ? TAURI_PLATFORM_ALIASES[p as keyof typeof TAURI_PLATFORM_ALIASES] : (p as Platform);
}

/** WinSparkle reads `sparkle:os` on the enclosure and skips items for another architecture (§1.5). */
export function sparkleOs(platform: Platform): "windows-x64" | "windows-arm64" | null {
  if (platform === "windows-x64") return "windows-x64";
  if (platform === "windows-arm64") return "windows-arm64";
  return null;
}

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const two = (n: number) => String(n).padStart(2, "0");

/**
 * RFC 822 date as Sparkle parses it: `E, dd MMM yyyy HH:mm:ss Z` in the en_US locale
 * (SUAppcastItem.m). A numeric zone ("+0000") rather than Date#toUTCString's "GMT".
 */
export function rfc822(d: Date): string {
  return `${DAYS[d.getUTCDay()]}, ${two(d.getUTCDate())} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} +0000`;
}
