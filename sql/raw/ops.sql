-- ops.*: what each run did. One row per run; one row per run x source; one row per rejected row x failed expectation.
create table if not exists ops.runs (
    run_id varchar primary key,
    as_of date not null,
    started_at timestamp not null,
    finished_at timestamp,
    status varchar not null,          -- succeeded; succeeded with stale sources; failed: sources stale past their limit
                                      -- (its reports are published); any other failure leaves no trace. The build's
                                      -- status: a step after the publish that failed (artifacts, the upload, a
                                      -- notification) is in the flow's state and exit status 5, not here
    catalog_dir varchar,
    sources varchar,                  -- source ids, comma separated
    rows_in bigint,
    rows_landed bigint,
    rows_quarantined bigint,
    stale_sources varchar,            -- each stale source: since when (its last good data) and why
    stale_past_limit varchar,         -- sources stale for longer than their max_stale_days (the run failed)
    catalog_digest varchar,           -- digest of the catalogs the run read (pipeline.catalog_digest)
    models_digest varchar             -- digest of the SQL models and macros it built with (transform.models_digest):
                                      -- a release that changed them words labels otherwise (marts.changes)
);
create table if not exists ops.source_loads (
    run_id varchar not null,
    as_of date not null,
    source_id varchar not null,
    kind varchar not null,
    landed_table varchar not null,
    data_as_of date,
    files integer,
    rows_in bigint not null,
    rows_landed bigint not null,
    rows_quarantined bigint not null,
    status varchar not null,          -- landed | stale (the source could not be read: the run uses its last good data)
    error varchar,                    -- why a stale source could not be read
    used_run_id varchar,              -- the run whose landed rows of this source the models read
    stale_since date,                 -- as-of date of the last good data a stale source runs on
    input_digest varchar,             -- digest of the batch as read and of what validating it depends on (reuse.py)
    reused_from varchar,              -- a run whose validated, landed rows this one reused (same input_digest)
    used_rows_in bigint               -- rows_in of the load whose rows the models read (used_run_id's): what the next
                                      -- run's row-count check compares with, kept on a stale line too
);
create table if not exists ops.quarantine (
    run_id varchar not null,
    as_of date not null,
    source_id varchar not null,
    landed_table varchar not null,
    row_no integer not null,
    source_ref varchar not null,
    expectation varchar not null,     -- the name (meta.name) of the expectation the row failed, in its suite file
    expectation_type varchar not null,-- its Great Expectations type, e.g. expect_column_values_to_be_in_set
    reason varchar,                   -- why the expectation exists (meta.why)
    column_name varchar,
    unexpected_value varchar,
    row_json varchar not null         -- the whole rejected row, kept
);
create table if not exists ops.model_builds (
    model varchar not null,           -- <layer>.<name>; analytics.*: schema analytics (flows/analytics.py)
    as_of date,                       -- marts: the as-of date whose rows the build wrote; null for rebuilt layers
    fingerprint varchar not null,     -- digest of the model's SQL and of everything it read (transform.py; analytics.*:
                                      -- its statements, the marts tables' columns and the marts views' SQL)
    content_digest varchar not null,  -- digest of what it holds (a mart: its rows of that date, run_id aside;
                                      -- analytics.*: its views' SQL and comments as DuckDB lists them)
    run_id varchar not null,          -- the run that built it
    built_at timestamp not null
);
create table if not exists ops.compacted_months (
    table_name varchar not null,      -- the mart (marts.<table_name>)
    month date not null,              -- first day of the month whose rows were rewritten in grain order
    rows bigint not null,             -- its rows then
    run_id varchar not null,          -- the run that rewrote them
    compacted_at timestamp not null
);
