// /ui/namespaces/edit/{namespace}/dependencies on its own, until the namespace page's tab registry takes the
// Dependencies tab (tabs/Dependencies.tsx): a header and the tab's body.
import { Link, useParams } from 'react-router';
import { NamespaceDependencies } from './tabs/Dependencies';

export function NamespaceDependenciesPage() {
  const { namespace = '' } = useParams();
  return (
    <section>
      <div className="page-head">
        <div>
          <div className="breadcrumb"><Link to={`/flows?namespace=${encodeURIComponent(namespace)}`}>Flows of {namespace}</Link></div>
          <h1>{namespace}: dependencies</h1>
        </div>
      </div>
      <NamespaceDependencies namespace={namespace} />
    </section>
  );
}
