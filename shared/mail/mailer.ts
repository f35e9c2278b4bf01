import nodemailer from 'nodemailer';

/** One message: plain text always (every client reads it), HTML optionally. */
export interface MailMessage {
  to: string | string[];
  subject: string;
  text: string;
  html?: string;
}

export interface Mailer {
  send(m: MailMessage): Promise<void>;
}

/**
 * SMTP through nodemailer: `smtpUrl` such as `smtp://user:pass@mail.example:587` or `smtps://…:465`
 * (nodemailer's URL form; STARTTLS is used when the server offers it). Fails (throws) when the server refuses.
 */
export function createMailer(opts: { smtpUrl: string; from: string }): Mailer {
  const transport = nodemailer.createTransport(opts.smtpUrl);
  return {
    async send(m) {
      await transport.sendMail({ from: opts.from, to: m.to, subject: m.subject, text: m.text, html: m.html });
    },
  };
}
