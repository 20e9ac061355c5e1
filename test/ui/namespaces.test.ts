// The namespace pages in real headless Chromium over the real embedded server: /ui/namespaces lists namespaces with
// their flow counts; a namespace's Overview shows its flows and executions by state; the KV Store tab adds a pair
// (read back through the API), edits its type, sets a ttl, refuses a value that does not fit its type at the field,
// and deletes it; the Editor tab opens a namespace file from the tree in the shared CodeEditor (CodeMirror, the language
// by the file's extension), edits and saves it (read back through the API).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/wait.js';
import { PASSWORD, USER, startUiHarness, type UiHarness } from './harness.js';

const LOG = 'io.kestra.plugin.core.log.Log';
const NS = 'ui.ns';
const flow = (ns: string, id: string) => `id: ${id}\nnamespace: ${ns}\ntasks:\n  - id: t\n    type: ${LOG}\n    message: hi\n`;
const auth = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;

let h: UiHarness;
let executionId: string;
beforeAll(async () => {
  h = await startUiHarness();
  await h.api('/flows', { yaml: flow(NS, 'first') });
  await h.api('/flows', { yaml: flow(NS, 'second') });
  await h.api('/flows', { yaml: flow(`${NS}.child`, 'third') });
  await h.api('/flows', { yaml: flow('ui.other', 'elsewhere') });
  executionId = (await h.api(`/executions/${NS}/first`, { body: {} })).id;
  await until(async () => (await h.api(`/executions/${executionId}`)).state.current === 'SUCCESS', 'the execution to succeed');
  // A namespace file, uploaded as a client would (multipart `fileContent`).
  const form = new FormData();
  form.append('fileContent', new Blob(['print("hello")\n']), 'hello.py');
  const res = await fetch(`${h.origin}/api/v1/namespaces/${NS}/files?path=/scripts/hello.py`, { method: 'POST', headers: { Authorization: auth }, body: form });
  expect(res.status).toBe(204);
}, 120_000);
afterAll(async () => { await h?.close(); });

const fileText = async (path: string): Promise<string> =>
  (await fetch(`${h.origin}/api/v1/namespaces/${NS}/files?path=${encodeURIComponent(path)}`, { headers: { Authorization: auth } })).text();
const kvStatus = async (key: string): Promise<number> =>
  (await fetch(`${h.origin}/api/v1/namespaces/${NS}/kv/${key}`, { headers: { Authorization: auth } })).status;

describe('/ui/namespaces', () => {
  it('lists namespaces with their flow counts and opens a namespace overview', async () => {
    const page = await h.signedInPage();
    await page.goto('/ui/namespaces');
    const table = page.getByRole('table', { name: 'Namespaces' });
    const row = table.locator('tbody tr').filter({ has: page.getByRole('link', { name: NS, exact: true }) });
    await row.waitFor();
    await until(async () => (await row.locator('td').last().textContent()) === '3', 'the flow count of ui.ns (two flows and one in ui.ns.child)');
    const other = table.locator('tbody tr').filter({ has: page.getByRole('link', { name: 'ui.other', exact: true }) });
    expect(await other.locator('td').last().textContent()).toBe('1');
    await h.screenshot(page, 'namespaces-list');

    await page.getByRole('link', { name: NS, exact: true }).click();
    await page.waitForURL(`**/ui/namespaces/edit/${NS}/overview`);
    expect(await page.getByRole('tab', { name: 'Overview' }).getAttribute('aria-selected')).toBe('true');
    await until(async () => (await page.getByLabel('Flow count').textContent()) === '3', 'the flow count');
    await until(async () => (await page.getByLabel('Execution count').textContent()) === '1', 'the execution count');
    const states = page.getByRole('table', { name: 'Executions by state' }).locator('tbody tr');
    await states.first().waitFor();
    expect(await states.allTextContents()).toEqual([expect.stringMatching(/^SUCCESS\s*1\s*100 %$/)]);
    const recent = page.getByRole('table', { name: 'Recent executions' });
    await recent.getByText(executionId).waitFor();
    await h.screenshot(page, 'namespace-overview');

    await page.getByRole('tab', { name: 'Flows' }).click();
    const flows = page.getByRole('table', { name: 'Namespace flows' });
    await flows.getByRole('link', { name: 'third' }).waitFor();
    expect(await flows.locator('tbody tr').count()).toBe(3);
  });
});

describe('namespace KV Store tab', () => {
  it('adds a pair, edits its type, sets a ttl, refuses a value of the wrong type at the field, and deletes it', async () => {
    const page = await h.signedInPage();
    await page.goto(`/ui/namespaces/edit/${NS}/kv`);
    await page.getByText('No KV pair in this namespace').waitFor();

    // Add: a NUMBER.
    await page.getByRole('button', { name: 'Add a key' }).click();
    const form = page.getByRole('form', { name: 'New KV pair' });
    await form.getByLabel('Key').fill('answer');
    await form.getByLabel('Type').selectOption('NUMBER');
    await form.getByLabel('Value').fill('42');
    await form.getByRole('button', { name: 'Save' }).click();
    const rows = page.getByRole('table', { name: 'KV pairs' }).locator('tbody tr');
    await rows.filter({ hasText: 'answer' }).filter({ hasText: 'NUMBER' }).waitFor();
    expect(await h.api(`/namespaces/${NS}/kv/answer`)).toEqual({ type: 'NUMBER', value: 42 });
    await h.screenshot(page, 'namespace-kv');

    // Edit: the stored value is loaded, then saved as JSON.
    await page.getByRole('button', { name: 'Edit answer' }).click();
    const edit = page.getByRole('form', { name: 'Edit answer' });
    expect(await edit.getByLabel('Value').inputValue()).toBe('42');
    expect(await edit.getByLabel('Key').getAttribute('readonly')).not.toBeNull();
    await edit.getByLabel('Type').selectOption('JSON');
    await edit.getByLabel('Value').fill('{"answer": 42, "list": [1, 2]}');
    await edit.getByRole('button', { name: 'Save' }).click();
    await rows.filter({ hasText: 'answer' }).filter({ hasText: 'JSON' }).waitFor();
    expect(await h.api(`/namespaces/${NS}/kv/answer`)).toEqual({ type: 'JSON', value: { answer: 42, list: [1, 2] } });

    // A STRING that the server would read as a DATE is refused at the field, nothing sent.
    await page.getByRole('button', { name: 'Add a key' }).click();
    const bad = page.getByRole('form', { name: 'New KV pair' });
    await bad.getByLabel('Key').fill('when');
    await bad.getByLabel('Value').fill('2024-01-01');
    await bad.getByRole('button', { name: 'Save' }).click();
    await bad.getByRole('alert').filter({ hasText: 'reads as a date' }).waitFor();
    expect(await kvStatus('when')).toBe(404);
    // As a DATE with a ttl: stored with an expiration date.
    await bad.getByLabel('Type').selectOption('DATE');
    await bad.getByLabel('Value').fill('2024-01-01');
    await bad.getByLabel('TTL').fill('PT1H');
    await bad.getByRole('button', { name: 'Save' }).click();
    await rows.filter({ hasText: 'when' }).filter({ hasText: 'DATE' }).waitFor();
    expect(await h.api(`/namespaces/${NS}/kv/when`)).toEqual({ type: 'DATE', value: '2024-01-01' });
    const listed = (await h.api(`/namespaces/${NS}/kv`)) as { key: string; expirationDate: string | null }[];
    const expires = Date.parse(listed.find((k) => k.key === 'when')!.expirationDate!);
    expect(expires).toBeGreaterThan(Date.now());
    expect(expires).toBeLessThanOrEqual(Date.now() + 3_600_000);

    // Delete.
    await page.getByRole('button', { name: 'Delete answer' }).click();
    await until(async () => (await rows.filter({ hasText: 'answer' }).count()) === 0, 'the row to go');
    expect(await kvStatus('answer')).toBe(404);
    expect(await kvStatus('when')).toBe(200);
  });
});

describe('namespace Editor tab', () => {
  it('opens a file from the tree in the code editor (language by extension), edits it and saves it', async () => {
    const page = await h.signedInPage();
    await page.goto(`/ui/namespaces/edit/${NS}/editor`);
    await page.getByRole('button', { name: 'scripts/' }).click();
    await page.getByRole('button', { name: 'Open /scripts/hello.py' }).click();
    // CodeMirror's editable content (in the editor's shadow root), named for the file.
    const editor = page.getByRole('textbox', { name: 'File content' });
    const editorText = () => editor.evaluate((el) => Array.from(el.querySelectorAll('.cm-line'), (l) => l.textContent).join('\n'));
    const language = () => editor.getAttribute('data-language');
    await until(async () => (await editorText()) === 'print("hello")\n', 'the file content in the editor');
    await until(async () => (await language()) === 'python', 'Python highlighting for a .py file');
    expect(await editor.locator('.cm-line span').count()).toBeGreaterThan(0);
    expect(await page.getByRole('button', { name: 'Save' }).isDisabled()).toBe(true);
    await editor.fill('print("hello, edited")\n');
    await page.getByText('(modified)').waitFor();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved /scripts/hello.py' }).waitFor();
    expect(await fileText('/scripts/hello.py')).toBe('print("hello, edited")\n');
    await h.screenshot(page, 'namespace-editor');

    // A new file, created from the tree's form, then saved with content.
    await page.getByLabel('New file or folder path').fill('notes/todo.md');
    await page.getByRole('button', { name: 'New file' }).click();
    await page.getByRole('heading', { name: '/notes/todo.md' }).waitFor();
    await until(async () => (await language()) === 'markdown', 'Markdown highlighting for a .md file');
    await editor.fill('- write tests\n');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved /notes/todo.md' }).waitFor();
    expect(await fileText('/notes/todo.md')).toBe('- write tests\n');

    // No language for an unknown extension: plain text, still edited and saved the same way (Ctrl-S).
    await page.getByLabel('New file or folder path').fill('notes/plain.txt');
    await page.getByRole('button', { name: 'New file' }).click();
    await page.getByRole('heading', { name: '/notes/plain.txt' }).waitFor();
    expect(await language()).toBeNull();
    await editor.fill('just text\n');
    await page.keyboard.press('Control+s');
    await page.getByRole('status').filter({ hasText: 'Saved /notes/plain.txt' }).waitFor();
    expect(await fileText('/notes/plain.txt')).toBe('just text\n');
  });
});
