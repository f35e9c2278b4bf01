import { useState } from 'preact/hooks';
import { ApiError, post } from '../api.ts';
import { go, href, route } from '../route.ts';
import { loadSession } from '../state.ts';
import { Field } from '../ui.tsx';

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
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState<string | null>(null);
  return (
    <main id="main" class="auth">
      <h1>{title}</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          setBusy(true);
          setErr(null);
          submit().then(
            () => setBusy(false),
            (x: Error) => {
              setBusy(false);
              setErr(x.message);
            },
          );
        }}
      >
        {children}
        {err && (
          <p class="error" role="alert">
            {err}
          </p>
        )}
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

export function SignIn() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  return (
    <Form
      title="Sign in"
      busyText="Signing in…"
      submit={async () => {
        await post('/v1/auth/login', { email, password, session: 'cookie' });
        await signedIn();
      }}
      foot={
        <p>
          No account yet? <a href={href('signup')}>Create one</a>.
        </p>
      }
    >
      <Field label="Email">
        <input
          type="email"
          name="email"
          autoComplete="username"
          required
          value={email}
          onInput={(e) => setEmail(e.currentTarget.value)}
        />
      </Field>
      <Field label="Password">
        <input
          type="password"
          name="password"
          autoComplete="current-password"
          required
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
      </Field>
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
      <Field label="Email">
        <input
          type="email"
          name="email"
          autoComplete="username"
          required
          value={email}
          onInput={(e) => setEmail(e.currentTarget.value)}
        />
      </Field>
      <Field label="Password" hint="At least 8 characters.">
        <input
          type="password"
          name="password"
          autoComplete="new-password"
          minLength={8}
          required
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
      </Field>
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
      submit={async () => {
        await post('/v1/auth/accept-invite', { token, password, session: 'cookie' });
        await signedIn();
      }}
    >
      <Field label="Invitation token">
        <input name="token" required value={token} onInput={(e) => setToken(e.currentTarget.value)} />
      </Field>
      <Field
        label="Password"
        hint="Your password if you already have an account; otherwise the new account's (8 characters or more)."
      >
        <input
          type="password"
          name="password"
          autoComplete="new-password"
          minLength={8}
          required
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
      </Field>
    </Form>
  );
}

export function VerifyEmail() {
  const [token, setToken] = useState(route.value.query.get('token') ?? '');
  return (
    <Form
      title="Confirm email"
      busyText="Confirming…"
      submit={async () => {
        await post('/v1/auth/verify-email', { token, session: 'cookie' });
        await signedIn();
      }}
    >
      <Field label="Confirmation token">
        <input name="token" required value={token} onInput={(e) => setToken(e.currentTarget.value)} />
      </Field>
    </Form>
  );
}
