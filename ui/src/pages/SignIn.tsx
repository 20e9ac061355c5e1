// The sign-in form shown whenever the API answers 401: basic auth (embedded home's BASIC_AUTH_USERNAME/PASSWORD) or a
// bearer token (API_TOKENS, or in the cluster home a Kubernetes ServiceAccount token); kept in sessionStorage.
import { useState, type FormEvent } from 'react';
import { getCredential, setCredential } from '../api';

export function SignIn() {
  const refused = getCredential() !== undefined;
  const [kind, setKind] = useState<'basic' | 'bearer'>(getCredential()?.kind ?? 'basic');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [token, setToken] = useState('');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setCredential(kind === 'basic' ? { kind, username, password } : { kind, token: token.trim() });
  };
  return (
    <div className="signin">
      <form className="card" onSubmit={submit} aria-labelledby="signin-title">
        <h1 id="signin-title">Sign in to flowpilot</h1>
        {refused && <div className="error-banner" role="alert">The server refused these credentials.</div>}
        <fieldset className="segmented">
          <legend>Method</legend>
          <label><input type="radio" name="kind" checked={kind === 'basic'} onChange={() => setKind('basic')} /> Username and password</label>
          <label><input type="radio" name="kind" checked={kind === 'bearer'} onChange={() => setKind('bearer')} /> Token</label>
        </fieldset>
        {kind === 'basic' ? (
          <>
            <label className="field">Username<input autoComplete="username" value={username} onChange={(e) => setUsername(e.target.value)} required /></label>
            <label className="field">Password<input type="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} required /></label>
          </>
        ) : (
          <label className="field">Token<textarea rows={3} value={token} onChange={(e) => setToken(e.target.value)} required spellCheck={false} /></label>
        )}
        <button type="submit" className="primary">Sign in</button>
      </form>
    </div>
  );
}
