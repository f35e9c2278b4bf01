import type { Transporter } from 'nodemailer';

/** One message: plain text always (every client reads it), HTML optionally. */
export interface MailMessage {
  to: string | string[];
  subject: string;
  text: string;
  html?: string;
}

/** Sends mail through the configured SMTP server (SMTP_URL). Shared by account mail and the email alert channel. */
export interface Mailer {
  /** Resolves once the SMTP server accepted the message; rejects when it refused it or was unreachable. */
  send(message: MailMessage): Promise<void>;
  /** Closes the transport (nothing stays open between messages; safe to call at shutdown). */
  close(): void;
}

/**
 * A mailer on nodemailer's SMTP transport: `smtp://user:pass@host:587` (STARTTLS when the server offers it),
 * `smtps://…:465` (TLS from the start). Connections time out, so a slow SMTP server bounds the time a request
 * waits instead of holding it forever.
 */
export function createMailer(o: { smtpUrl: string; from: string; timeoutMs?: number }): Mailer {
  const timeout = o.timeoutMs ?? 10_000;
  const url = new URL(o.smtpUrl);
  // nodemailer (39 modules) is loaded with the first message, not with the process: most processes that configure
  // SMTP send nothing for a long while, and every test stack and role process started would load it for nothing.
  let transport: Promise<Transporter> | undefined;
  const open = () =>
    (transport ??= import('nodemailer').then(({ createTransport }) =>
      createTransport({
        host: url.hostname,
        port: url.port ? Number(url.port) : url.protocol === 'smtps:' ? 465 : 587,
        secure: url.protocol === 'smtps:',
        auth: url.username
          ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) }
          : undefined,
        // One connection per message: account mail is rare, and nothing stays open to close at shutdown.
        pool: false,
        connectionTimeout: timeout,
        greetingTimeout: timeout,
        socketTimeout: timeout,
      }),
    ));
  return {
    async send(m) {
      await (await open()).sendMail({ from: o.from, to: m.to, subject: m.subject, text: m.text, html: m.html });
    },
    close() {
      void transport?.then((t) => t.close());
    },
  };
}
