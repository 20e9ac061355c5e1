// What every NamespaceStore must do, as one vitest suite run against each home (SQLite: operator/store/sqlite,
// FlowNamespace resources: operator/kube/store): create, conflict on create, replace, versions, list, chain, delete.
import { describe, expect, it } from 'vitest';
import { ConflictError, type NamespaceStore } from '../../operator/store/types.js';

export function namespaceStoreContract(home: string, store: () => NamespaceStore): void {
  describe(`NamespaceStore (${home})`, () => {
    it('creates, reads back, refuses a second create, replaces with a newer version, deletes', async () => {
      const s = store();
      const pd = [{ type: 'io.kestra.plugin.core.log.Log', values: { level: 'WARN', nested: { a: [1, 2] } }, forced: true }];
      const created = await s.put({ id: 'c.team', description: 'Team', variables: { region: 'eu', db: { port: 5432 } }, pluginDefaults: pd }, { create: true });
      expect(created).toMatchObject({ id: 'c.team', description: 'Team', variables: { region: 'eu', db: { port: 5432 } }, pluginDefaults: pd });
      expect(created.updated).toMatch(/^\d{4}-/);
      expect(await s.get('c.team')).toMatchObject({ id: 'c.team', variables: { region: 'eu' }, version: created.version });
      await expect(s.put({ id: 'c.team', variables: {}, pluginDefaults: [] }, { create: true })).rejects.toBeInstanceOf(ConflictError);
      const replaced = await s.put({ id: 'c.team', variables: { region: 'us' }, pluginDefaults: [] });
      expect(replaced.version).toBeGreaterThan(created.version);
      expect(replaced.description).toBeUndefined();
      expect((await s.get('c.team'))?.variables).toEqual({ region: 'us' });
      expect(await s.delete('c.team')).toBe(true);
      expect(await s.delete('c.team')).toBe(false);
      expect(await s.get('c.team')).toBeUndefined();
    });

    it('lists by id and answers the chain of a namespace: the stored ones among it and its parents, nearest first', async () => {
      const s = store();
      for (const id of ['z', 'z.y.x', 'z.y.x.w.other', 'zz']) await s.put({ id, variables: { at: id }, pluginDefaults: [] });
      expect((await s.list()).map((n) => n.id)).toEqual(['z', 'z.y.x', 'z.y.x.w.other', 'zz']);
      expect((await s.chain('z.y.x.w')).map((n) => n.id)).toEqual(['z.y.x', 'z']);
      expect((await s.chain('z.y.x')).map((n) => n.variables.at)).toEqual(['z.y.x', 'z']);
      expect(await s.chain('nothing.here')).toEqual([]);
    });

    it('reads variables back without prototypes from their keys', async () => {
      const s = store();
      await s.put({ id: 'proto', variables: JSON.parse('{"m": {"__proto__": {"polluted": 1}}}') as Record<string, unknown>, pluginDefaults: [] });
      const m = (await s.get('proto'))!.variables.m as Record<string, unknown>;
      expect(Object.keys(m)).toEqual(['__proto__']);
      expect(m.polluted).toBeUndefined();
    });
  });
}
