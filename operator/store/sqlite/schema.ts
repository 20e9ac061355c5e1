// Schema migrations of the embedded SQLite store, applied in order; `schema_version` records the last one applied.
// Append new migrations at the end; never edit one that has shipped.

export const MIGRATIONS: readonly string[] = [
  // 1: flows, executions (+ labels, commands), KV, logs with an FTS5 external-content index.
  `
  CREATE TABLE flows (
    namespace   TEXT NOT NULL,
    id          TEXT NOT NULL,
    revision    INTEGER NOT NULL,
    source      TEXT NOT NULL,
    json        TEXT NOT NULL,
    description TEXT,
    updated     TEXT NOT NULL,
    deleted     INTEGER NOT NULL DEFAULT 0,
    is_latest   INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (namespace, id, revision)
  ) WITHOUT ROWID;
  CREATE INDEX flows_latest ON flows (is_latest, deleted, namespace, id);

  -- Executions: a small summary row for filtering and sorting, and the JSON body in its own table, so that
  -- searches scan and sort compact rows and read only the bodies of the page they return.
  CREATE TABLE executions (
    seq              INTEGER PRIMARY KEY,
    id               TEXT NOT NULL UNIQUE,
    namespace        TEXT NOT NULL,
    flow_id          TEXT NOT NULL,
    state            TEXT NOT NULL,
    start_date       TEXT NOT NULL,
    end_date         TEXT,
    labels           TEXT NOT NULL,
    resource_version INTEGER NOT NULL
  );
  CREATE INDEX executions_flow ON executions (namespace, flow_id, state, start_date);
  CREATE INDEX executions_state ON executions (state, start_date);
  CREATE INDEX executions_start ON executions (start_date);

  CREATE TABLE execution_bodies (
    seq  INTEGER PRIMARY KEY REFERENCES executions (seq) ON DELETE CASCADE,
    body TEXT NOT NULL
  );

  CREATE TABLE execution_labels (
    seq   INTEGER NOT NULL REFERENCES executions (seq) ON DELETE CASCADE,
    key   TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (seq, key, value)
  ) WITHOUT ROWID;
  CREATE INDEX execution_labels_kv ON execution_labels (key, value, seq);

  CREATE TABLE commands (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    execution_id TEXT NOT NULL,
    json         TEXT NOT NULL,
    created      TEXT NOT NULL
  );
  CREATE INDEX commands_execution ON commands (execution_id, seq);

  CREATE TABLE kv (
    namespace       TEXT NOT NULL,
    key             TEXT NOT NULL,
    type            TEXT NOT NULL,
    value           TEXT NOT NULL,
    expiration_date TEXT,
    updated         TEXT NOT NULL,
    PRIMARY KEY (namespace, key)
  ) WITHOUT ROWID;

  CREATE TABLE logs (
    id           INTEGER PRIMARY KEY,
    execution_id TEXT NOT NULL,
    namespace    TEXT NOT NULL,
    flow_id      TEXT NOT NULL,
    task_id      TEXT,
    task_run_id  TEXT,
    attempt      INTEGER,
    level        INTEGER NOT NULL,
    ts           TEXT NOT NULL,
    message      TEXT NOT NULL
  );
  CREATE INDEX logs_execution ON logs (execution_id, ts);
  CREATE INDEX logs_flow ON logs (namespace, flow_id, ts);
  CREATE INDEX logs_ts ON logs (ts);
  CREATE VIRTUAL TABLE logs_fts USING fts5 (message, content = 'logs', content_rowid = 'id');
  CREATE TRIGGER logs_ai AFTER INSERT ON logs BEGIN
    INSERT INTO logs_fts (rowid, message) VALUES (new.id, new.message);
  END;
  CREATE TRIGGER logs_ad AFTER DELETE ON logs BEGIN
    INSERT INTO logs_fts (logs_fts, rowid, message) VALUES ('delete', old.id, old.message);
  END;
  CREATE TRIGGER logs_au AFTER UPDATE OF message ON logs BEGIN
    INSERT INTO logs_fts (logs_fts, rowid, message) VALUES ('delete', old.id, old.message);
    INSERT INTO logs_fts (rowid, message) VALUES (new.id, new.message);
  END;
  `,
  // 2: durable trigger state (schedule progress, backfills, MultipleCondition windows, enable/disable) and markers of
  // work done once per key (a finished execution handled by the Flow triggers, an event already turned into an execution).
  `
  CREATE TABLE trigger_state (
    namespace  TEXT NOT NULL,
    flow_id    TEXT NOT NULL,
    trigger_id TEXT NOT NULL,
    disabled   INTEGER NOT NULL DEFAULT 0,
    state      TEXT NOT NULL,
    updated    TEXT NOT NULL,
    version    INTEGER NOT NULL,
    PRIMARY KEY (namespace, flow_id, trigger_id)
  ) WITHOUT ROWID;

  CREATE TABLE trigger_marks (
    scope   TEXT NOT NULL,
    key     TEXT NOT NULL,
    created TEXT NOT NULL,
    PRIMARY KEY (scope, key)
  ) WITHOUT ROWID;
  `,
  // 3: purging old trigger marks of a scope reads only the old ones.
  `
  CREATE INDEX trigger_marks_created ON trigger_marks (scope, created);
  `,
  // 4: task process groups alive in embedded mode (written right after spawn, before the process is let run, removed
  // when the group is gone), so that a restart after a crash kills what the crash left before re-running the attempt.
  `
  CREATE TABLE task_processes (
    id           TEXT PRIMARY KEY,
    execution_id TEXT NOT NULL,
    task_run_id  TEXT NOT NULL,
    attempt      INTEGER NOT NULL,
    pid          INTEGER NOT NULL,
    start_time   INTEGER NOT NULL,
    boot_id      TEXT NOT NULL,
    created      TEXT NOT NULL
  ) WITHOUT ROWID;
  `,
  // 5: namespaces as things (Kestra's Namespace): description, variables and plugin defaults their flows inherit.
  `
  CREATE TABLE namespaces (
    id      TEXT PRIMARY KEY,
    body    TEXT NOT NULL,
    updated TEXT NOT NULL,
    version INTEGER NOT NULL
  ) WITHOUT ROWID;
  `,
  // 6: daily execution statistics (POST /stats/executions/daily) group by start day and state, with durations, from
  // this index alone.
  `
  CREATE INDEX executions_daily ON executions (start_date, state, end_date);
  `,
  // 7: task runs of an execution in rows of their own (one per run, by position in the run list), so that an update
  // writes only the runs that changed: a loop of n iterations writes O(n) bytes in all, not O(n^2). The body keeps the
  // rest of the record. Existing bodies are split; one that does not parse is left as it was (listActive leaves it out).
  `
  CREATE TABLE execution_task_runs (
    seq  INTEGER NOT NULL REFERENCES executions (seq) ON DELETE CASCADE,
    idx  INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (seq, idx)
  ) WITHOUT ROWID;
  INSERT INTO execution_task_runs (seq, idx, body)
    SELECT b.seq, r.key, r.value FROM execution_bodies b, json_each(CASE WHEN json_valid(b.body) THEN b.body ELSE '{}' END, '$.taskRunList') r
    WHERE r.type = 'object';
  UPDATE execution_bodies SET body = CASE WHEN json_valid(body) THEN json_remove(body, '$.taskRunList') ELSE body END;
  `,
];
