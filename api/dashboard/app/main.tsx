import './styles.css';
import { render, type FunctionComponent } from 'preact';
import { post, signedOut } from './api.ts';
import { lazy } from './lazy.tsx';
import { go, href, route } from './route.ts';
import { AcceptInvite, SignIn, SignUp, VerifyEmail } from './screens/auth.tsx';
import { OverviewScreen } from './screens/overview.tsx';
import { booted, loadSession, me, rememberSite, siteId, sites } from './state.ts';
import { Loading } from './ui.tsx';

// Every screen but the first is its own chunk, fetched when first shown.
const IssuesScreen = lazy(() => import('./screens/issues.tsx').then((m) => m.IssuesScreen), 'issues');
const IssueScreen = lazy(() => import('./screens/issues.tsx').then((m) => m.IssueScreen), 'issue');
const SessionScreen = lazy(() => import('./screens/issues.tsx').then((m) => m.SessionScreen), 'session');
const PageScreen = lazy(() => import('./screens/page.tsx').then((m) => m.PageScreen), 'page');
const JourneysScreen = lazy(() => import('./screens/journeys.tsx').then((m) => m.JourneysScreen), 'journeys');
const ExploreScreen = lazy(() => import('./screens/explore.tsx').then((m) => m.ExploreScreen), 'explorer');
const DeploysScreen = lazy(() => import('./screens/deploys.tsx').then((m) => m.DeploysScreen), 'deploys');
const AlertsScreen = lazy(() => import('./screens/alerts.tsx').then((m) => m.AlertsScreen), 'alerts');
const SettingsScreen = lazy(() => import('./screens/settings.tsx').then((m) => m.SettingsScreen), 'settings');

const NAV: [string, string][] = [
  ['overview', 'Overview'],
  ['issues', 'Issues'],
  ['page', 'Pages'],
  ['journeys', 'Journeys'],
  ['explore', 'Explorer'],
  ['deploys', 'Deploys'],
  ['alerts', 'Alerts'],
  ['settings', 'Settings'],
];
const PUBLIC = new Set(['signin', 'signup', 'accept-invite', 'verify-email']);

/** The screens of a site by route name; `issue` and `session` also take the id after the name. */
const SCREENS: Record<string, FunctionComponent<{ site: string; id: string }>> = {
  issues: IssuesScreen,
  issue: IssueScreen,
  session: SessionScreen,
  page: PageScreen,
  journeys: JourneysScreen,
  explore: ExploreScreen,
  deploys: DeploysScreen,
  alerts: AlertsScreen,
  settings: SettingsScreen,
};

function Screen({ name, site }: { name: string; site: string }) {
  const Shown = SCREENS[name] ?? OverviewScreen;
  return <Shown site={site} id={route.value.parts[1] ?? ''} />;
}

async function signOut(): Promise<void> {
  await post('/v1/auth/logout').catch(() => {});
  me.value = null;
  go('signin');
}

function Shell() {
  const m = me.value!;
  const name = route.value.parts[0] ?? 'overview';
  const site = siteId.value;
  const active = name === 'issue' || name === 'session' ? 'issues' : name;
  return (
    <>
      <a
        class="skip"
        href="#main"
        onClick={(e) => {
          e.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={href('overview', { site })}>
          Friction
        </a>
        <nav aria-label="Screens">
          <ul>
            {NAV.map(([k, label]) => (
              <li key={k}>
                <a href={href(k, { site })} aria-current={active === k ? 'page' : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          {sites.value.length > 0 && (
            <label class="site-pick">
              <span class="sr-only">Site</span>
              <select
                value={site ?? ''}
                onChange={(e) => {
                  rememberSite(e.currentTarget.value);
                  go(name === 'issue' || name === 'session' ? 'issues' : name, { site: e.currentTarget.value });
                }}
              >
                {sites.value.map((s) => (
                  <option key={s.id} value={s.id}>
                    {s.name}
                  </option>
                ))}
              </select>
            </label>
          )}
          <span class="muted email" title={`${m.user.email} (${m.role}) in ${m.org.name}`}>
            {m.user.email}
          </span>
          <button type="button" class="secondary" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {site ? (
          <Screen key={`${name}:${site}`} name={name} site={site} />
        ) : name === 'settings' ? (
          <Screen name="settings" site="" />
        ) : (
          <section class="card empty">
            <h1>No site yet</h1>
            <p>
              Create your first site in <a href={href('settings', { tab: 'sites' })}>Settings → Sites</a>.
            </p>
          </section>
        )}
      </main>
    </>
  );
}

function App() {
  if (!booted.value)
    return (
      <main id="main">
        <Loading what="Friction" />
      </main>
    );
  const name = route.value.parts[0] ?? '';
  if (name === 'signup') return <SignUp />;
  if (name === 'accept-invite') return <AcceptInvite />;
  if (name === 'verify-email') return <VerifyEmail />;
  if (!me.value || signedOut.value || name === 'signin') return <SignIn />;
  return <Shell />;
}

// Screens change title and focus with the route, so screen readers and keyboards land on the new content.
route.subscribe((r) => {
  const n = r.parts[0] ?? 'overview';
  document.title = `${PUBLIC.has(n) ? n.replace('-', ' ') : n} · Friction`;
});

void loadSession();
render(<App />, document.getElementById('app')!);
