// Child process of cache-keepalive.test.ts: a process whose only work is waiting for a KV cache's first list (as a
// task runner at start), against the API server whose kubeconfig is argv[2]. Prints "synced" once ready() resolves.
import { KubeConfig } from '@kubernetes/client-node';
import { KubeKVStore } from '../../operator/kube/store/kv.js';

const kc = new KubeConfig();
kc.loadFromFile(process.argv[2]!);
const kv = new KubeKVStore(kc, 'default', { onError: (err) => process.stdout.write(`list failed: ${(err as { code?: number }).code ?? String(err)}\n`) });
kv.cache.start();
await kv.cache.ready();
process.stdout.write('synced\n');
// Exit at once: a cache stopped right after its first list may still open its watch (client-node ListWatch), which
// would keep this process alive; what is tested is the wait before.
process.exit(0);
