// metadata.managedFields as a real server keeps them across writes: a PUT without them, or with an empty list, leaves
// the stored ones unchanged (clients unaware of the field never strip it); a non-empty list replaces them. The server
// does not compute managedFields itself (see server.ts).
import { afterEach, expect, it } from 'vitest';
import { CoreV1Api } from '@kubernetes/client-node';
import { startKubeTestServer, type KubeTestServer } from './index.js';

let srv: KubeTestServer | undefined;
afterEach(async () => { await srv?.close(); srv = undefined; });

it('keeps managedFields on an update that omits them or sends an empty list; replaces them with a new list', async () => {
  srv = await startKubeTestServer();
  const core = srv.kubeConfig().makeApiClient(CoreV1Api);
  const mf = (manager: string) => [{ manager, operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:k': {} } } }];
  await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'c', managedFields: mf('kubectl') }, data: { k: '1' } } });
  const managers = async () => (await core.readNamespacedConfigMap({ namespace: 'default', name: 'c' })).metadata?.managedFields?.map((m) => m.manager);
  expect(await managers()).toEqual(['kubectl']);
  await core.replaceNamespacedConfigMap({ namespace: 'default', name: 'c', body: { metadata: { name: 'c' }, data: { k: '2' } } });
  expect(await managers()).toEqual(['kubectl']);
  await core.replaceNamespacedConfigMap({ namespace: 'default', name: 'c', body: { metadata: { name: 'c', managedFields: [] }, data: { k: '3' } } });
  expect(await managers()).toEqual(['kubectl']);
  await core.replaceNamespacedConfigMap({ namespace: 'default', name: 'c', body: { metadata: { name: 'c', managedFields: mf('operator') }, data: { k: '4' } } });
  expect(await managers()).toEqual(['operator']);
  expect((await core.readNamespacedConfigMap({ namespace: 'default', name: 'c' })).data).toEqual({ k: '4' });
});
