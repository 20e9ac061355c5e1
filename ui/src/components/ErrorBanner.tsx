// An API error as an alert: the server's message and each field it names (ApiError), or any other error's text.
import { ApiError } from '../api';

export function ErrorBanner({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  const fields = error instanceof ApiError ? error.errors.filter((e) => e.path && e.message !== message) : [];
  return (
    <div className="error-banner" role="alert">
      <strong>{error instanceof ApiError ? `Error ${error.status}` : 'Error'}:</strong> {message}
      {fields.length > 0 && (
        <ul>{fields.map((f, i) => <li key={i}><code>{f.path}</code>: {f.message}</li>)}</ul>
      )}
      {onRetry && <button type="button" className="link" onClick={onRetry}>Retry</button>}
    </div>
  );
}
