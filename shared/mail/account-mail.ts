import type { MailMessage } from './mailer.ts';

/**
 * The mail accounts receive. Each carries its token in the text (to paste into a client or `curl`), never a link
 * that acts on GET: mail scanners fetch links, and a fetched link must not verify or accept anything.
 */
const footer = (baseUrl: string) =>
  `\n\n— Friction at ${baseUrl}\nIf you did not expect this message, ignore it: nothing happens without the token above.`;

/** `takesOver`: the address holds an unverified account, which confirming takes over (docs/security.md). */
export function verificationMail(to: string, token: string, baseUrl: string, takesOver = false): MailMessage {
  const warning = takesOver
    ? 'This address already has a Friction account that was never confirmed. Confirming gives that account the new ' +
      'password, signs it out everywhere and removes it from every organization it belongs to. If that account is ' +
      'yours, do not confirm: sign in with its password instead.\n\n'
    : '';
  return {
    to,
    subject: 'Confirm your email address for Friction',
    text:
      `Someone (hopefully you) signed up for Friction with this address.\n\n${warning}Your confirmation token (valid 24 hours):\n\n  ${token}\n\n` +
      `Confirm with:\n\n  curl -X POST ${baseUrl}/v1/auth/verify-email -H 'content-type: application/json' -d '{"token":"${token}"}'` +
      footer(baseUrl),
  };
}

/** Sent instead of a confirmation when the address already has an account: the signup answer is the same either way. */
export function alreadyRegisteredMail(to: string, baseUrl: string): MailMessage {
  return {
    to,
    subject: 'Someone tried to sign up for Friction with your address',
    text:
      'Someone (hopefully you) tried to create a Friction account with this address, which already has one. ' +
      `No new account was made. To sign in, use POST ${baseUrl}/v1/auth/login with your password.` +
      footer(baseUrl),
  };
}

export function invitationMail(
  to: string,
  o: { orgName: string; role: string; token: string; baseUrl: string; invitedBy: string },
): MailMessage {
  return {
    to,
    subject: `You are invited to ${o.orgName} on Friction`,
    text:
      `${o.invitedBy} invited you to the organization "${o.orgName}" on Friction as ${o.role}.\n\nYour invitation token (valid 7 days):\n\n  ${o.token}\n\n` +
      `Accept with (a new account's password, or your existing account's password):\n\n  curl -X POST ${o.baseUrl}/v1/auth/accept-invite -H 'content-type: application/json' -d '{"token":"${o.token}","password":"…"}'` +
      footer(o.baseUrl),
  };
}

/** A password reset the address asked for (POST /v1/auth/forgot-password). */
export function passwordResetMail(to: string, token: string, baseUrl: string): MailMessage {
  return {
    to,
    subject: 'Reset your Friction password',
    text:
      `Someone (hopefully you) asked to reset the password of the Friction account with this address.\n\nYour reset token (valid 30 minutes, once):\n\n  ${token}\n\n` +
      `Choose a new password with (every session of the account then ends):\n\n  curl -X POST ${baseUrl}/v1/auth/reset-password -H 'content-type: application/json' -d '{"token":"${token}","new_password":"…"}'` +
      footer(baseUrl),
  };
}
