// /ui/flows/new (Kestra's path; `?namespace=` fills the namespace): the flow editor on a starter template; Save
// creates the flow (POST /flows) and opens its Edit tab.
import { useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { api } from '../../api';
import { FlowSourceEditor } from './FlowSourceEditor';
import { flowPath } from '../../paths';


/** The source a new flow starts from. */
export function starterFlow(namespace = 'company.team'): string {
  return `id: hello-world
namespace: ${namespace}

description: |
  A flow that says hello. Edit it, then Save.

inputs:
  - id: name
    type: STRING
    defaults: world

tasks:
  - id: hello
    type: io.kestra.plugin.core.log.Log
    message: "Hello, {{ inputs.name }}!"
`;
}

const NAMESPACE = /^[a-z0-9][a-z0-9._-]*$/;

export function FlowNew() {
  const [params] = useSearchParams();
  const ns = params.get('namespace');
  const [source, setSource] = useState(() => starterFlow(ns && NAMESPACE.test(ns) ? ns : undefined));
  const navigate = useNavigate();

  const save = async (text: string) => {
    const flow = await api.createFlow(text);
    navigate(flowPath(flow.namespace, flow.id, 'edit'));
    return undefined;
  };
  return (
    <section>
      <div className="page-head">
        <div>
          <div className="breadcrumb"><Link to="/flows">Flows</Link></div>
          <h1>New flow</h1>
        </div>
      </div>
      <FlowSourceEditor source={source} onChange={setSource} onSave={save} status="A new flow: its id and namespace come from the source" />
    </section>
  );
}
