// A real SMTP server for tests (the smtp-server package) on 127.0.0.1 and a free port. It accepts
// every message (or answers what `reject` says), and parses what it received just enough to read the
// envelope, To, Subject and the text and HTML parts of a nodemailer message.
import { SMTPServer } from "smtp-server";
import type { AddressInfo } from "node:net";

export interface ReceivedMail {
  /** Envelope sender and recipients (MAIL FROM / RCPT TO). */
  envelope: { from: string; to: string[] };
  /** The AUTH user name the client logged in with, if any. */
  user: string | null;
  headers: Map<string, string>;
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  raw: string;
}

/** An SMTP reply for a refused recipient: 5xx is permanent, 4xx temporary. */
export interface SmtpRejection {
  code: number;
  message: string;
}

export interface TestSmtpServer {
  port: number;
  /** smtp://user:pass@127.0.0.1:port, for SMTP_URL. */
  url: string;
  received: ReceivedMail[];
  /** Decides per recipient whether to refuse it (null: accept). */
  reject: ((to: string) => SmtpRejection | null) | null;
  stop(): Promise<void>;
}

export async function startSmtpServer(): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  const state: TestSmtpServer = {
    port: 0,
    url: "",
    received,
    reject: null,
    stop: async () => {},
  };
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ["STARTTLS"],
    authOptional: true,
    // Plain AUTH without TLS: it is a loopback test server.
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      callback(null, { user: auth.username ?? "" });
    },
    onRcptTo(address, _session, callback) {
      const rejection = state.reject?.(address.address) ?? null;
      if (!rejection) return callback();
      const err = new Error(rejection.message) as Error & { responseCode: number };
      err.responseCode = rejection.code;
      callback(err);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        received.push({
          ...parseMessage(raw),
          envelope: {
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
            to: session.envelope.rcptTo.map((r) => r.address),
          },
          user: typeof session.user === "string" ? session.user : null,
          raw,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;
  state.port = port;
  state.url = `smtp://mailer:secret-pw@127.0.0.1:${port}`;
  state.stop = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return state;
}

type Parsed = Omit<ReceivedMail, "envelope" | "user" | "raw">;

function splitHeaders(raw: string): { headers: Map<string, string>; body: string } {
  const cut = raw.indexOf("\r\n\r\n");
  const head = cut < 0 ? raw : raw.slice(0, cut);
  const body = cut < 0 ? "" : raw.slice(cut + 4);
  const headers = new Map<string, string>();
  // Unfold continuation lines, then one header per line.
  for (const line of head.replace(/\r\n[ \t]+/g, " ").split("\r\n")) {
    const i = line.indexOf(":");
    if (i > 0) headers.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
  }
  return { headers, body };
}

/** RFC 2047 encoded words (=?UTF-8?Q?…?= / =?UTF-8?B?…?=). */
function decodeWords(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, "?==?")
    .replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g, (_, _charset: string, enc: string, text: string) =>
      enc.toUpperCase() === "B"
        ? Buffer.from(text, "base64").toString("utf8")
        : decodeQuotedPrintable(text.replace(/_/g, " ")),
    );
}

function decodeQuotedPrintable(s: string): string {
  const bytes: number[] = [];
  const src = s.replace(/=\r?\n/g, "");
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === "=" && /^[0-9A-Fa-f]{2}$/.test(src.slice(i + 1, i + 3))) {
      bytes.push(parseInt(src.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(...Buffer.from(c, "utf8"));
  }
  return Buffer.from(bytes).toString("utf8");
}

function decodeBody(headers: Map<string, string>, body: string): string {
  const enc = (headers.get("content-transfer-encoding") ?? "7bit").toLowerCase();
  if (enc === "quoted-printable") return decodeQuotedPrintable(body);
  if (enc === "base64") return Buffer.from(body.replace(/\s+/g, ""), "base64").toString("utf8");
  return body;
}

function parseMessage(raw: string): Parsed {
  const { headers, body } = splitHeaders(raw);
  const out: Parsed = {
    headers,
    from: decodeWords(headers.get("from") ?? ""),
    to: decodeWords(headers.get("to") ?? ""),
    subject: decodeWords(headers.get("subject") ?? ""),
    text: "",
    html: "",
  };
  const collect = (h: Map<string, string>, b: string) => {
    const type = (h.get("content-type") ?? "text/plain").toLowerCase();
    const boundary = /boundary="?([^";]+)"?/i.exec(h.get("content-type") ?? "")?.[1];
    if (type.startsWith("multipart/") && boundary) {
      const parts = b.split(`--${boundary}`).slice(1);
      for (const part of parts) {
        if (part.startsWith("--")) break;
        const p = splitHeaders(part.replace(/^\r\n/, ""));
        collect(p.headers, p.body.replace(/\r\n$/, ""));
      }
    } else if (type.startsWith("text/html")) out.html = decodeBody(h, b);
    else if (type.startsWith("text/plain")) out.text = decodeBody(h, b);
  };
  collect(headers, body);
  // SMTP line endings back to the \n the templates use.
  out.text = out.text.replace(/\r\n/g, "\n");
  out.html = out.html.replace(/\r\n/g, "\n");
  return out;
}
