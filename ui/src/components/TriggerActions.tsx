// Buttons acting on one trigger's state (the /triggers routes): enable or disable it, and unlock it when it holds an
// execution lock. Used by /ui/triggers and the flow's Triggers tab; `onDone` reloads the list, `onError` shows a failure.
import { api, type TriggerContext } from '../api';

export function TriggerActions({ t, onDone, onError }: { t: TriggerContext; onDone(): void; onError(err: unknown): void }) {
  const ref = { namespace: t.namespace, flowId: t.flowId, triggerId: t.triggerId };
  const run = (call: () => Promise<unknown>) => () => { call().then(onDone, onError); };
  return (
    <span className="row-gap">
      <button type="button" aria-label={`${t.disabled ? 'Enable' : 'Disable'} trigger ${t.triggerId}`}
        onClick={run(() => api.setTriggerDisabled(ref, !t.disabled))}>{t.disabled ? 'Enable' : 'Disable'}</button>
      {t.executionId && (
        <button type="button" aria-label={`Unlock trigger ${t.triggerId}`} onClick={run(() => api.unlockTrigger(ref))}>Unlock</button>
      )}
    </span>
  );
}
