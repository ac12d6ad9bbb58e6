// Content-Disposition for downloads (RFC 6266): an ASCII fallback `filename` plus the exact
// UTF-8 name in `filename*` (RFC 8187), so browsers and curl -J save the artifact under its name.
export function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, "_");
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
