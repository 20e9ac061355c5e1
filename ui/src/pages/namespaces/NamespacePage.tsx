// /ui/namespaces/edit/{namespace}[/{tab}]: the namespace's header and its tab bar (tabs.ts), the tab chosen by the URL.
import { Link, useParams } from 'react-router';
import { EmptyState } from '../../components/EmptyState';
import { Tabs } from '../../components/Tabs';
import { NAMESPACE_TABS } from './tabs';
import { DEFAULT_NAMESPACE_TAB, namespacePath } from '../../paths';

export function NamespacePage() {
  const { namespace = '', tab = DEFAULT_NAMESPACE_TAB } = useParams();
  const current = NAMESPACE_TABS.find((t) => t.id === tab);
  return (
    <section>
      <div className="page-head">
        <div>
          <div className="breadcrumb"><Link to="/namespaces">Namespaces</Link></div>
          <h1>{namespace}</h1>
        </div>
      </div>
      <Tabs label="Namespace" tabs={NAMESPACE_TABS} current={tab} to={(t) => namespacePath(namespace, t)} />
      {current ? <current.component key={namespace} namespace={namespace} /> : <EmptyState title={`This namespace has no tab '${tab}'`} />}
    </section>
  );
}
