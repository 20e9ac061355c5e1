// The root component: the sign-in form while the API refuses the caller (401), else the shell with the current page.
// Signing in or out bumps `session`, which remounts the page so it fetches again with the new credential.
import { useEffect, useState } from 'react';
import { isUnauthorized, onAuthChange } from './api';
import { Layout, type NavItem } from './components/Layout';
import { SignIn } from './pages/SignIn';

export function App({ nav }: { nav: NavItem[] }) {
  const [session, setSession] = useState(0);
  const [needsSignIn, setNeedsSignIn] = useState(isUnauthorized());
  useEffect(() => onAuthChange(() => {
    const now = isUnauthorized();
    setNeedsSignIn(now);
    if (!now) setSession((s) => s + 1);
  }), []);
  return needsSignIn ? <SignIn /> : <Layout nav={nav} session={session} />;
}
