import { useState } from 'preact/hooks';
import { ApiError, post } from '../api.ts';
import { go, href, route } from '../route.ts';
import { loadSession } from '../state.ts';
import { ErrorNote, Field, useSubmit } from '../ui.tsx';

type Input = { value: string; set: (v: string) => void };

function EmailField({ value, set }: Input) {
  return (
    <Field label="Email">
      <input
        type="email"
        name="email"
        autoComplete="username"
        required
        value={value}
        onInput={(e) => set(e.currentTarget.value)}
      />
    </Field>
  );
}

/** The password of an account being signed in to (`current`), or the one being chosen (8 characters or more). */
function PasswordField({ value, set, current, hint }: Input & { current?: boolean; hint?: string }) {
  return (
    <Field label="Password" hint={hint}>
      <input
        type="password"
        name="password"
        autoComplete={current ? 'current-password' : 'new-password'}
        minLength={current ? undefined : 8}
        required
        value={value}
        onInput={(e) => set(e.currentTarget.value)}
      />
    </Field>
  );
}

function TokenField({ label, value, set }: Input & { label: string }) {
  return (
    <Field label={label}>
      <input name="token" required value={value} onInput={(e) => set(e.currentTarget.value)} />
    </Field>
  );
}

function Form({
  title,
  submit,
  children,
  busyText,
  foot,
}: {
  title: string;
  submit: () => Promise<void>;
  children: preact.ComponentChildren;
  busyText: string;
  foot?: preact.ComponentChildren;
}) {
  const { busy, err, onSubmit } = useSubmit();
  return (
    <main id="main" class="auth">
      <h1>{title}</h1>
      <form onSubmit={onSubmit(submit)}>
        {children}
        {err && <ErrorNote error={err} />}
        <button type="submit" disabled={busy}>
          {busy ? busyText : title}
        </button>
      </form>
      {foot}
    </main>
  );
}

const AUTH_SCREENS = ['signin', 'signup', 'accept-invite', 'verify-email'];
/** After signing in, a deep link that needed it opens; a sign-in screen gives way to the overview. */
async function signedIn(): Promise<void> {
  await loadSession();
  const n = route.value.parts[0];
  if (!n || AUTH_SCREENS.includes(n)) go('overview');
}
/** Posts to an auth route that starts a session (kept in a cookie), then goes on as signed in. */
async function startSession(path: string, body: Record<string, string>): Promise<void> {
  await post(path, { ...body, session: 'cookie' });
  await signedIn();
}

export function SignIn() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  return (
    <Form
      title="Sign in"
      busyText="Signing in…"
      submit={() => startSession('/v1/auth/login', { email, password })}
      foot={
        <p>
          No account yet? <a href={href('signup')}>Create one</a>.
        </p>
      }
    >
      <EmailField value={email} set={setEmail} />
      <PasswordField value={password} set={setPassword} current />
    </Form>
  );
}

export function SignUp() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [org, setOrg] = useState('');
  const [sent, setSent] = useState<string | null>(null);
  if (sent) {
    return (
      <main id="main" class="auth">
        <h1>Check your mail</h1>
        <p>We sent a confirmation link to {sent}. Open it within 24 hours to finish creating your account.</p>
      </main>
    );
  }
  return (
    <Form
      title="Create account"
      busyText="Creating…"
      submit={async () => {
        const r = await post<{ status?: string; token?: string }>('/v1/auth/signup', {
          email,
          password,
          org_name: org,
          session: 'cookie',
        }).catch(async (e: ApiError) => {
          // With SMTP configured, signup takes no session field: the session starts at verify-email.
          if (e.status === 400 && /session/.test(e.message))
            return post<{ status?: string }>('/v1/auth/signup', { email, password, org_name: org });
          throw e;
        });
        if (r.status === 'verification_sent') setSent(email);
        else await signedIn();
      }}
      foot={
        <p>
          Already have an account? <a href={href('signin')}>Sign in</a>.
        </p>
      }
    >
      <EmailField value={email} set={setEmail} />
      <PasswordField value={password} set={setPassword} hint="At least 8 characters." />
      <Field label="Organization name">
        <input name="org" required maxLength={120} value={org} onInput={(e) => setOrg(e.currentTarget.value)} />
      </Field>
    </Form>
  );
}

export function AcceptInvite() {
  const [token, setToken] = useState(route.value.query.get('token') ?? '');
  const [password, setPassword] = useState('');
  return (
    <Form
      title="Join organization"
      busyText="Joining…"
      submit={() => startSession('/v1/auth/accept-invite', { token, password })}
    >
      <TokenField label="Invitation token" value={token} set={setToken} />
      <PasswordField
        value={password}
        set={setPassword}
        hint="Your password if you already have an account; otherwise the new account's (8 characters or more)."
      />
    </Form>
  );
}

export function VerifyEmail() {
  const [token, setToken] = useState(route.value.query.get('token') ?? '');
  return (
    <Form title="Confirm email" busyText="Confirming…" submit={() => startSession('/v1/auth/verify-email', { token })}>
      <TokenField label="Confirmation token" value={token} set={setToken} />
    </Form>
  );
}
