// The application shell: left navigation (the entries of the route table, routes.tsx), a top bar with sign-out when
// signed in, and the current page.
import { NavLink, Outlet } from 'react-router';
import { getCredential, setCredential } from '../api';

export interface NavItem { to: string; label: string }

export function Layout({ nav, session }: { nav: NavItem[]; session: number }) {
  const credential = getCredential();
  return (
    <div className="shell">
      <aside className="sidebar">
        <div className="brand">flowpilot</div>
        <nav aria-label="Main">
          <ul>
            {nav.map((n) => (
              <li key={n.to}><NavLink to={n.to} className={({ isActive }) => (isActive ? 'active' : undefined)}>{n.label}</NavLink></li>
            ))}
          </ul>
        </nav>
      </aside>
      <div className="main">
        <header className="topbar">
          <span className="spacer" />
          {credential && (
            <>
              <span className="muted">{credential.kind === 'basic' ? credential.username : 'token'}</span>
              <button type="button" onClick={() => setCredential(undefined)}>Sign out</button>
            </>
          )}
        </header>
        <main className="content">
          <Outlet key={session} />
        </main>
      </div>
    </div>
  );
}
