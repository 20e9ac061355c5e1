// The page for a /ui path no route matches.
import { Link, useLocation } from 'react-router';
import { EmptyState } from '../components/EmptyState';

export function NotFound() {
  const { pathname } = useLocation();
  return (
    <EmptyState title="Page not found">
      <p>No page at <code>/ui{pathname}</code>. <Link to="/flows">Go to the flows</Link>.</p>
    </EmptyState>
  );
}
