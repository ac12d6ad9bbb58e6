// X.509 certificates for tests, made at test time with node:crypto alone (no openssl, no package):
// ECDSA P-256 keys, SHA-256 signatures, the certificate DER-encoded by the few lines of ASN.1 below.
// `makeCa()` is a self-signed CA; `makeLeaf()` a server certificate (serverAuth) for some IP
// addresses and DNS names, signed by a CA or by its own key (`issuer` omitted = self-signed).
// Each comes back as PEM, ready for Bun.serve({ tls: { cert, key } }) or NODE_EXTRA_CA_CERTS.
import { generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";
import { isIP } from "node:net";

export interface TestCert {
  /** The certificate, PEM. */
  cert: string;
  /** Its private key, PKCS#8 PEM. */
  key: string;
  /** For signing further certificates with it. */
  subject: string;
  privateKey: KeyObject;
}

// --- minimal DER ---
function len(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}
const tlv = (tag: number, content: Buffer) => Buffer.concat([Buffer.from([tag]), len(content.length), content]);
const seq = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]) => tlv(0x31, Buffer.concat(items));
const explicit = (n: number, content: Buffer) => tlv(0xa0 + n, content);
const octets = (b: Buffer) => tlv(0x04, b);
const bits = (b: Buffer) => tlv(0x03, Buffer.concat([Buffer.from([0]), b]));
const bool = (v: boolean) => tlv(0x01, Buffer.from([v ? 0xff : 0]));
const utf8 = (s: string) => tlv(0x0c, Buffer.from(s, "utf8"));
function int(b: Buffer): Buffer {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  const v = b.subarray(i);
  return tlv(0x02, v[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), v]) : v);
}
function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split(".").map(Number);
  const out = [a! * 40 + b!];
  for (const n of rest) {
    const parts = [n & 0x7f];
    for (let v = n >>> 7; v > 0; v >>>= 7) parts.unshift(0x80 | (v & 0x7f));
    out.push(...parts);
  }
  return tlv(0x06, Buffer.from(out));
}
/** UTCTime (years 1950–2049), as RFC 5280 requires for those years. */
function time(d: Date): Buffer {
  const iso = d.toISOString(); // 2026-11-23T07:00:00.000Z
  return tlv(0x17, Buffer.from(`${iso.slice(2, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`, "ascii"));
}

const ECDSA_SHA256 = seq(oid("1.2.840.10045.4.3.2"));
const name = (cn: string) => seq(set(seq(oid("2.5.4.3"), utf8(cn))));
const extension = (id: string, critical: boolean, value: Buffer) => seq(oid(id), ...(critical ? [bool(true)] : []), octets(value));

function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split(".").map(Number));
  throw new Error(`tls-certs: only IPv4 addresses are supported, got ${ip}`);
}

function certificate(opts: {
  subject: string;
  issuer: string;
  publicKey: KeyObject;
  signer: KeyObject;
  ca: boolean;
  ips?: string[];
  dns?: string[];
  notBefore: Date;
  notAfter: Date;
}): string {
  const spki = opts.publicKey.export({ type: "spki", format: "der" });
  const extensions = [
    extension("2.5.29.19", true, opts.ca ? seq(bool(true)) : seq()),
    // keyUsage: keyCertSign + cRLSign for a CA; digitalSignature for a server.
    extension("2.5.29.15", true, opts.ca ? bits(Buffer.from([0x06])) : bits(Buffer.from([0x80]))),
  ];
  if (!opts.ca) {
    extensions.push(extension("2.5.29.37", false, seq(oid("1.3.6.1.5.5.7.3.1"))));
    const names = [...(opts.dns ?? []).map((d) => tlv(0x82, Buffer.from(d, "ascii"))), ...(opts.ips ?? []).map((ip) => tlv(0x87, ipBytes(ip)))];
    extensions.push(extension("2.5.29.17", false, seq(...names)));
  }
  const tbs = seq(
    explicit(0, int(Buffer.from([2]))),
    int(Buffer.concat([Buffer.from([0x40]), randomBytes(15)])),
    ECDSA_SHA256,
    name(opts.issuer),
    seq(time(opts.notBefore), time(opts.notAfter)),
    name(opts.subject),
    Buffer.from(spki),
    explicit(3, seq(...extensions)),
  );
  const signature = sign("sha256", tbs, opts.signer); // DER-encoded ECDSA signature
  const der = seq(tbs, ECDSA_SHA256, bits(signature));
  return `-----BEGIN CERTIFICATE-----\n${der.toString("base64").match(/.{1,64}/g)!.join("\n")}\n-----END CERTIFICATE-----\n`;
}

const validity = () => ({ notBefore: new Date(Date.now() - 60 * 60_000), notAfter: new Date(Date.now() + 24 * 60 * 60_000) });
const keyPair = () => generateKeyPairSync("ec", { namedCurve: "P-256" });
const pem = (k: KeyObject) => k.export({ type: "pkcs8", format: "pem" }).toString();

/** A self-signed certificate authority. */
export function makeCa(commonName = "Keyward test CA"): TestCert {
  const { publicKey, privateKey } = keyPair();
  const cert = certificate({ subject: commonName, issuer: commonName, publicKey, signer: privateKey, ca: true, ...validity() });
  return { cert, key: pem(privateKey), subject: commonName, privateKey };
}

/** A server certificate for `ips`/`dns`, signed by `issuer` (a CA from makeCa), or self-signed without one. */
export function makeLeaf(opts: { ips?: string[]; dns?: string[]; issuer?: TestCert; commonName?: string }): TestCert {
  const { publicKey, privateKey } = keyPair();
  const subject = opts.commonName ?? opts.dns?.[0] ?? opts.ips?.[0] ?? "localhost";
  const issuer = opts.issuer ?? { subject, privateKey };
  const cert = certificate({ subject, issuer: issuer.subject, publicKey, signer: issuer.privateKey, ca: false, ips: opts.ips, dns: opts.dns, ...validity() });
  return { cert, key: pem(privateKey), subject, privateKey };
}
