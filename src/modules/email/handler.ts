// The outbox handler of kind `email`: opens the sealed values, renders the template and sends it over
// SMTP (nodemailer, SMTP_URL). An SMTP 5xx answer is permanent (the message is marked failed at once);
// anything else (4xx, connection refused, timeout) is retried by the delivery loop with backoff.
//
// With no SMTP_URL (development) the rendered message, link or code included, is written to the log
// at info and recorded with status `logged`, so a local invite or sign-in works without a mail
// server. This is the one log line that may carry an email's secret values; no other does, and with
// NODE_ENV=production it leaves the text out (a production log never holds a code, link or key).
//
// A sign-in code is written to the outbox for every address asked for (so the request does the same
// work for a known and an unknown address, and its timing tells nothing); here, at delivery, the
// code goes out only to an address that may sign in. Any other is dropped: nothing is sent or logged
// with it, and the message is recorded `logged` (a one-line info log without the code says why).
import type { Transporter } from "nodemailer";
import type { Config } from "../../config";
import type { Logger } from "../../shared/logger";
import type { Secrets } from "../keys/secrets";
import { PermanentDeliveryError, type OutboxHandler } from "../outbox/handlers";
import type { OutboxMessage } from "../outbox/repo";
import { openEmail, type OpenedEmail } from "./outbox";
import { DEFAULT_RENDER_CONTEXT, renderEmail, type EmailRenderContext, type RenderedEmail } from "./templates";

/**
 * Time limits of one SMTP exchange, well inside the delivery loop's 5-minute claim (nodemailer's own
 * defaults wait up to 10 minutes on a silent socket).
 */
export const SMTP_TIMEOUTS = { connectionTimeout: 15_000, greetingTimeout: 15_000, socketTimeout: 60_000 } as const;

type EmailDeps = {
  config: Pick<Config, "smtpUrl" | "mailFrom" | "nodeEnv">;
  secrets: Secrets;
  logger: Logger;
  /** Settings and template overrides, read per message (defaults when absent: tests). */
  context?: () => Promise<EmailRenderContext>;
  /** Whether an address may receive a sign-in code (sign-in/service.ts maySignIn), asked at delivery. */
  maySignIn: (address: string) => Promise<boolean>;
};

export function createEmailHandler(deps: EmailDeps): OutboxHandler {
  const { config, logger } = deps;
  // nodemailer (and the node:net, node:tls, node:dns… it brings) loads with the first email sent,
  // not at start-up: most starts send none, and a node without SMTP_URL never needs it.
  const smtpUrl = config.smtpUrl;
  let transport: Promise<Transporter> | null = null;
  const smtp = (url: string) =>
    (transport ??= import("nodemailer")
      .then(({ createTransport }) => createTransport({ url, ...SMTP_TIMEOUTS }))
      .catch((e: unknown) => {
        transport = null; // the next message tries again
        throw e;
      }));
  return async (m: OutboxMessage) => {
    const ctx = deps.context ? await deps.context() : DEFAULT_RENDER_CONTEXT;
    const { email, rendered } = prepare(deps.secrets, m, ctx);
    if (email.template === "sign_in_code" && !(await deps.maySignIn(email.to))) {
      logger.info("sign-in code not sent: the address cannot sign in (not a user, license owner or ADMIN_EMAILS address)", { outbox_id: m.id, template: email.template });
      return "logged";
    }
    if (!smtpUrl) {
      logger.info("email not sent: no SMTP_URL is configured, so it is logged instead (development mode)", {
        outbox_id: m.id,
        template: email.template,
        to: email.to,
        subject: rendered.subject,
        ...(config.nodeEnv === "production" ? { text_omitted: "NODE_ENV=production: set SMTP_URL to send emails" } : { text: rendered.text }),
      });
      return "logged";
    }
    try {
      await (await smtp(smtpUrl)).sendMail({
        // The admin's email_from setting, else MAIL_FROM (required with SMTP_URL).
        from: ctx.from ?? config.mailFrom ?? undefined,
        to: email.to,
        subject: rendered.subject,
        text: rendered.text,
        html: rendered.html,
        // RFC 3834: an automatic message; auto-responders should not answer it.
        headers: { "Auto-Submitted": "auto-generated" },
      });
    } catch (e) {
      throw smtpFailure(e);
    }
  };
}

/** Opens and renders a message; a payload that cannot be rendered now never will be: permanent. */
function prepare(secrets: Secrets, m: OutboxMessage, ctx: EmailRenderContext): { email: OpenedEmail; rendered: RenderedEmail } {
  try {
    const email = openEmail(secrets, m.payload);
    return { email, rendered: renderEmail(email, ctx) };
  } catch (e) {
    throw new PermanentDeliveryError(`cannot render email: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** SMTP replies 5xx are permanent (RFC 5321 §4.2.1); 4xx and network failures are worth a retry. */
export function smtpFailure(e: unknown): Error {
  const err = e as { message?: unknown; responseCode?: unknown; code?: unknown };
  const message = typeof err?.message === "string" ? err.message : String(e);
  const status = typeof err?.responseCode === "number" ? err.responseCode : null;
  const code = typeof err?.code === "string" ? `${err.code} ` : "";
  const text = `SMTP ${status ?? "error"}: ${code}${message}`;
  return status !== null && status >= 500 && status < 600 ? new PermanentDeliveryError(text) : new Error(text);
}

/** Boot check (serve): production with no SMTP_URL logs emails instead of sending them. */
export function warnIfEmailIsOnlyLogged(config: Pick<Config, "nodeEnv" | "smtpUrl">, logger: Logger): boolean {
  if (config.nodeEnv !== "production" || config.smtpUrl) return false;
  logger.warn("SMTP_URL is not set: emails (sign-in codes, invites) are written to the log instead of being sent");
  return true;
}
