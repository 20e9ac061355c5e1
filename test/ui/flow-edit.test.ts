// Flow authoring in real headless Chromium over the real embedded server: the Edit tab saves a new revision, shows an
// invalid edit's errors at their lines (as you type, and when Save is refused), completes from the flow schema; the
// Revisions tab compares two revisions and restores an old one; /ui/flows/new creates a flow; the Execute form sends
// typed inputs with a file, enforces required ones, and shows the server's input errors at their field.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/wait.js';
import { startUiHarness, type UiHarness } from './harness.js';

const LOG = 'io.kestra.plugin.core.log.Log';
const NS = 'ui.author';
const flowYaml = (id: string, message: string) => `id: ${id}\nnamespace: ${NS}\ntasks:\n  - id: say\n    type: ${LOG}\n    message: ${message}\n`;

const INPUTS_FLOW = `id: inputs
namespace: ${NS}
inputs:
  - id: name
    type: STRING
    description: Who to greet
    validator: "^[a-z]+$"
  - id: count
    type: INT
    defaults: 3
  - id: ratio
    type: FLOAT
    required: false
  - id: loud
    type: BOOLEAN
    defaults: false
  - id: color
    type: ENUM
    values: [red, green, blue]
    defaults: green
  - id: sizes
    type: MULTISELECT
    values: [S, M, L]
    required: false
  - id: tags
    type: ARRAY
    itemType: STRING
    required: false
  - id: payload
    type: JSON
    required: false
  - id: day
    type: DATE
    required: false
  - id: at
    type: DATETIME
    required: false
  - id: token
    type: SECRET
    required: false
  - id: data
    type: FILE
tasks:
  - id: hello
    type: ${LOG}
    message: "{{ inputs.name }} {{ inputs.count }}"
`;

let h: UiHarness;
beforeAll(async () => {
  h = await startUiHarness();
  await h.api('/flows', { yaml: flowYaml('editme', 'first') });
  await h.api('/flows', { yaml: flowYaml('invalid', 'fine') });
  await h.api('/flows', { yaml: flowYaml('history', 'one') });
  await h.api(`/flows/${NS}/history`, { method: 'PUT', yaml: flowYaml('history', 'two') });
  await h.api(`/flows/${NS}/history`, { method: 'PUT', yaml: flowYaml('history', 'three') });
  await h.api('/flows', { yaml: INPUTS_FLOW });
}, 120_000);
afterAll(async () => { await h?.close(); });

/** A signed-in page whose waits fail after 10 s with the locator named (the test itself has 30 s). */
async function newPage(): Promise<Page> {
  const page = await h.signedInPage();
  page.setDefaultTimeout(10_000);
  return page;
}

const editor = (page: Page) => page.getByRole('textbox', { name: 'Flow source' });

/** Replaces the editor's whole text as a paste would. */
async function setEditorText(page: Page, text: string): Promise<void> {
  await editor(page).click();
  await page.keyboard.press('Control+a');
  await page.keyboard.insertText(text);
}

const editorText = (page: Page) => editor(page).evaluate((el) => Array.from(el.querySelectorAll('.cm-line'), (l) => l.textContent).join('\n'));

describe('the Edit tab', () => {
  it('edits and saves the flow as a new revision', async () => {
    const page = await newPage();
    await page.goto(`/ui/flows/edit/${NS}/editme/edit`);
    await editor(page).waitFor();
    await until(async () => (await editorText(page)).includes('message: first'), 'the source in the editor');
    expect(await page.getByRole('tab', { name: 'Edit' }).getAttribute('aria-selected')).toBe('true');
    await page.getByRole('region', { name: 'Problems' }).getByText('No problems').waitFor();

    await setEditorText(page, flowYaml('editme', 'second'));
    await page.getByText('unsaved changes').waitFor();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved revision 2' }).waitFor();
    await h.screenshot(page, 'flow-edit');

    const flow = await h.api(`/flows/${NS}/editme?source=true`);
    expect(flow.revision).toBe(2);
    expect(flow.source).toBe(flowYaml('editme', 'second'));
    await page.getByText('Revision 2', { exact: true }).waitFor();
  });

  it('shows an invalid edit at its line as you type, and Save reports it without saving', async () => {
    const page = await newPage();
    const validations: string[] = [];
    page.on('request', (r) => { if (r.url().endsWith('/api/v1/flows/validate')) validations.push(r.postData() ?? ''); });
    await page.goto(`/ui/flows/edit/${NS}/invalid/edit`);
    await editor(page).waitFor();
    const bad = `id: invalid\nnamespace: ${NS}\ntasks:\n  - id: say\n    type: ${LOG}\n    message: fine\n    mesage: typo\n`;
    await setEditorText(page, bad);

    // The server's validation, debounced: the unknown property at line 7, marked in the text.
    const problems = page.getByRole('region', { name: 'Problems' });
    await problems.getByText('unknown property `mesage`').waitFor();
    expect(await problems.locator('li').first().textContent()).toMatch(/^Line 7 tasks\[0\]\.mesage unknown property `mesage`/);
    const mark = editor(page).locator('.cm-lintRange-error').first();
    await mark.waitFor();
    expect(await mark.textContent()).toContain('mesage');
    const markedLine = await mark.evaluate((el) => el.closest('.cm-line')?.textContent);
    expect(markedLine).toBe('    mesage: typo');
    expect(validations.at(-1)).toBe(bad);

    // A YAML syntax error is found in the browser, at its line, with no server call.
    const before = validations.length;
    await setEditorText(page, `id: invalid\nnamespace: ${NS}\ntasks: [\n`);
    await problems.locator('li').first().waitFor();
    expect(await problems.locator('li').first().textContent()).toMatch(/^Line \d+/);
    await setEditorText(page, bad);
    await problems.getByText('unknown property `mesage`').waitFor();
    expect(validations.slice(before).every((body) => !body.includes('tasks: ['))).toBe(true);

    await page.getByRole('button', { name: 'Save' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'Error 422' });
    await alert.waitFor();
    expect(await alert.textContent()).toContain('tasks[0].mesage');
    await h.screenshot(page, 'flow-edit-invalid');
    const flow = await h.api(`/flows/${NS}/invalid?source=true`);
    expect(flow.revision).toBe(1);
    expect(flow.source).toBe(flowYaml('invalid', 'fine'));
  });

  it('completes property names per task type and type values from the flow schema', async () => {
    const page = await newPage();
    await page.goto(`/ui/flows/edit/${NS}/editme/edit`);
    await editor(page).waitFor();
    await until(async () => (await editorText(page)).includes('message: second'), 'the source in the editor');
    await editor(page).click();
    await page.keyboard.press('Control+End');
    await page.keyboard.insertText('    lev');
    await page.keyboard.press('Control+Space');
    const listbox = page.getByRole('listbox');
    await listbox.getByRole('option', { name: /^level/ }).click();
    await until(async () => (await editorText(page)).includes('    level: '), 'the completed key', 10_000);
    await page.keyboard.insertText('WA');
    await page.keyboard.press('Control+Space');
    await listbox.getByRole('option', { name: /^WARN/ }).click();
    await until(async () => (await editorText(page)).includes('    level: WARN'), 'the completed value', 10_000);

    // A new task: its `type` values come from the schema's task types.
    await page.keyboard.press('Control+End');
    await page.keyboard.insertText('\n  - id: other\n    type: io.kestra.plugin.core.debug.Re');
    await page.keyboard.press('Control+Space');
    await listbox.getByRole('option', { name: /io\.kestra\.plugin\.core\.debug\.Return/ }).waitFor();
    await h.screenshot(page, 'flow-edit-completion');
  });
});

describe('the Revisions tab', () => {
  it('compares two revisions side by side and restores an old one as a new revision', async () => {
    const page = await newPage();
    await page.goto(`/ui/flows/edit/${NS}/history/revisions`);
    const rows = page.getByRole('table', { name: 'Revisions' }).locator('tbody tr');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(3);
    expect(await rows.first().textContent()).toMatch(/^3.*current/);

    // Default comparison: 2 against 3; then 1 against 3.
    await page.getByRole('table', { name: 'Revision 2 compared with revision 3' }).waitFor();
    await page.getByRole('combobox', { name: 'Left revision' }).selectOption('1');
    const diff = page.getByRole('table', { name: 'Revision 1 compared with revision 3' });
    await diff.waitFor();
    const changed = diff.locator('tr.diff-changed');
    expect(await changed.count()).toBe(1);
    expect(await changed.locator('td').allTextContents()).toEqual(['6', '    message: one', '6', '    message: three']);
    expect(await diff.locator('tr.diff-same').count()).toBe(5);
    await h.screenshot(page, 'flow-revisions');

    await page.getByRole('button', { name: 'Restore revision 1' }).click();
    const dialog = page.getByRole('dialog', { name: 'Restore revision 1?' });
    await dialog.waitFor();
    // Cancel changes nothing.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await h.api(`/flows/${NS}/history`)).revision).toBe(3);

    await page.getByRole('button', { name: 'Restore revision 1' }).click();
    await dialog.getByRole('button', { name: 'Restore', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Restored revision 1 as revision 4' }).waitFor();
    const latest = await h.api(`/flows/${NS}/history?source=true`);
    expect(latest.revision).toBe(4);
    expect(latest.source).toBe(flowYaml('history', 'one'));
    await until(async () => (await rows.count()) === 4, 'the new revision listed');
    expect(await rows.first().textContent()).toMatch(/^4.*current/);
  });
});

describe('/ui/flows/new', () => {
  it('starts from a template and creates the flow', async () => {
    const page = await newPage();
    await page.goto('/ui/flows');
    await page.getByRole('link', { name: 'Create flow' }).click();
    await page.waitForURL('**/ui/flows/new');
    await editor(page).waitFor();
    await until(async () => (await editorText(page)).includes('id: hello-world'), 'the starter template');
    await page.getByRole('region', { name: 'Problems' }).getByText('No problems').waitFor();
    await h.screenshot(page, 'flow-new');
    await setEditorText(page, flowYaml('brand-new', 'hello'));
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(`**/ui/flows/edit/${NS}/brand-new/edit`);
    const flow = await h.api(`/flows/${NS}/brand-new?source=true`);
    expect(flow.source).toBe(flowYaml('brand-new', 'hello'));
  });
});

describe('the Execute form', () => {
  const openForm = async (page: Page) => {
    await page.goto(`/ui/flows/edit/${NS}/inputs/overview`);
    await page.getByRole('button', { name: 'Execute' }).click();
    const dialog = page.getByRole('dialog', { name: 'Execute inputs' });
    await dialog.waitFor();
    return dialog;
  };

  it('runs the flow with typed inputs and a file, after enforcing required ones', async () => {
    const page = await newPage();
    const posts: string[] = [];
    page.on('request', (r) => { if (r.method() === 'POST' && /\/api\/v1\/executions\/ui\.author\/inputs$/.test(r.url())) posts.push(r.headers()['content-type'] ?? ''); });
    const dialog = await openForm(page);
    // Defaults filled, widgets per type, descriptions shown.
    expect(await dialog.getByLabel('count', { exact: true }).inputValue()).toBe('3');
    expect(await dialog.getByRole('combobox', { name: 'color' }).inputValue()).toBe('green');
    expect(await dialog.getByRole('switch', { name: 'loud' }).isChecked()).toBe(false);
    expect(await dialog.getByLabel('token', { exact: true }).getAttribute('type')).toBe('password');
    expect(await dialog.getByLabel('at', { exact: true }).getAttribute('type')).toBe('datetime-local');
    expect(await dialog.getByLabel('day', { exact: true }).getAttribute('type')).toBe('date');
    expect(await dialog.getByLabel('data', { exact: true }).getAttribute('type')).toBe('file');
    expect(await dialog.getByRole('listbox', { name: 'sizes' }).count()).toBe(1);
    await dialog.getByText('Who to greet').waitFor();

    // Required inputs without a default are enforced before anything is sent.
    await dialog.getByRole('button', { name: 'Execute' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'This input is required' }).first().waitFor();
    expect(await dialog.getByRole('alert').filter({ hasText: 'This input is required' }).count()).toBe(2); // name, data
    expect(posts).toEqual([]);

    await dialog.getByLabel('name', { exact: true }).fill('ada');
    await dialog.getByLabel('count', { exact: true }).fill('7');
    await dialog.getByLabel('ratio', { exact: true }).fill('0.25');
    await dialog.getByRole('switch', { name: 'loud' }).check();
    await dialog.getByRole('combobox', { name: 'color' }).selectOption('blue');
    await dialog.getByRole('listbox', { name: 'sizes' }).selectOption(['S', 'L']);
    await dialog.getByRole('button', { name: 'Add tags item' }).click();
    await dialog.getByRole('textbox', { name: 'tags item 1' }).fill('x');
    await dialog.getByRole('button', { name: 'Add tags item' }).click();
    await dialog.getByRole('textbox', { name: 'tags item 2' }).fill('y');
    await dialog.getByLabel('payload', { exact: true }).fill('{"k": [1, 2]}');
    await dialog.getByLabel('day', { exact: true }).fill('2024-05-06');
    await dialog.getByLabel('token', { exact: true }).fill('s3cret');
    await dialog.getByLabel('data', { exact: true }).setInputFiles({ name: 'rows.csv', mimeType: 'text/csv', buffer: Buffer.from('a,b\n1,2\n') });
    await h.screenshot(page, 'flow-execute-form');
    await dialog.getByRole('button', { name: 'Execute' }).click();

    await page.waitForURL(/\/ui\/executions\/ui\.author\/inputs\/[^/]+$/);
    expect(posts).toHaveLength(1);
    expect(posts[0]).toMatch(/^multipart\/form-data; boundary=/);
    const id = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    await until(async () => (await h.api(`/executions/${id}`)).state.current === 'SUCCESS', `execution ${id} to succeed`);
    const execution = await h.api(`/executions/${id}`);
    expect(execution.inputs).toMatchObject({
      name: 'ada', count: 7, ratio: 0.25, loud: true, color: 'blue', sizes: ['S', 'L'], tags: ['x', 'y'],
      payload: { k: [1, 2] }, day: '2024-05-06',
    });
    expect(JSON.stringify(execution.inputs)).not.toContain('s3cret');
    expect(execution.inputs.data).toMatch(/^kestra:\/\/.*rows\.csv$/);
    const res = await fetch(`${h.origin}/api/v1/executions/${id}/file?path=${encodeURIComponent(execution.inputs.data)}`,
      { headers: { Authorization: `Basic ${Buffer.from('ui-admin:ui: correct horse').toString('base64')}` } });
    expect(await res.text()).toBe('a,b\n1,2\n');
  });

  it("shows the server's input error at its field and starts nothing", async () => {
    const page = await newPage();
    const before = (await h.api(`/executions/search?namespace=${NS}&flowId=inputs`)).total;
    const dialog = await openForm(page);
    await dialog.getByLabel('name', { exact: true }).fill('NOT lower');
    await dialog.getByLabel('data', { exact: true }).setInputFiles({ name: 'x.txt', mimeType: 'text/plain', buffer: Buffer.from('x') });
    await dialog.getByRole('button', { name: 'Execute' }).click();
    const fieldError = page.locator('#input-name-error');
    await fieldError.waitFor();
    expect(await fieldError.textContent()).toMatch(/\^\[a-z\]\+\$/);
    expect(await dialog.getByLabel('name', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    expect(new URL(page.url()).pathname).toBe(`/ui/flows/edit/${NS}/inputs/overview`);
    await h.screenshot(page, 'flow-execute-error');
    expect((await h.api(`/executions/search?namespace=${NS}&flowId=inputs`)).total).toBe(before);
  });
});
