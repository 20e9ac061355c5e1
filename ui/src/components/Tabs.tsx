// A tab bar whose current tab is part of the URL (deep links, back button): each tab is a link built by `to(tab)`.
import type { ComponentType } from 'react';
import { Link } from 'react-router';

export interface TabDef { id: string; label: string }
/** One entry of a page's tab registry (a page's tabs.ts): its URL id, label and the component given the page's props. */
export interface PageTab<P> extends TabDef { component: ComponentType<P> }

export function Tabs({ tabs, current, to, label }: { tabs: TabDef[]; current: string; to: (id: string) => string; label: string }) {
  return (
    <nav className="tabs" role="tablist" aria-label={label}>
      {tabs.map((t) => (
        <Link key={t.id} to={to(t.id)} role="tab" aria-selected={t.id === current} className={t.id === current ? 'tab active' : 'tab'}>
          {t.label}
        </Link>
      ))}
    </nav>
  );
}
