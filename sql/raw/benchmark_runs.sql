-- raw.benchmark_runs: one row per benchmark run not from MLPerf: a serving run (one concurrency level of one
-- setup), an offline run (throughput only, e.g. a batch job), an own training run of a catalog workload (its time
-- to train), or a published training figure.
create table if not exists raw.benchmark_runs (
    run_id varchar not null,
    as_of date not null,
    source_id varchar not null,
    data_as_of date not null,
    row_no integer not null,
    source_ref varchar not null,
    kind varchar,                     -- serving | offline | training
    accelerator varchar,              -- a catalog accelerator id
    instance_type varchar,
    chips double,
    model varchar,                    -- a catalog model id
    precision varchar,
    concurrency double,               -- max concurrent requests (vLLM --max-concurrency); null when unlimited
    request_rate double,              -- offered requests/s (vLLM --request-rate); null when unlimited
    input_tokens double,              -- mean per request
    output_tokens double,             -- mean per request
    request_throughput double,        -- completed requests/s
    output_tokens_per_s double,
    ttft_p50_ms double,               -- latency and request counts: serving (null on offline runs)
    ttft_p99_ms double,
    tpot_p50_ms double,
    tpot_p99_ms double,
    completed double,
    failed double,
    power_w double,
    tokens_per_s_per_chip double,     -- training: published tokens/s per chip
    mfu double,                       -- training: published model FLOPs utilization
    sequence_length double,
    workload varchar,                 -- training: the catalog training workload an own run measured
    time_to_train_minutes double,     -- training: how long that own run took
    run_source varchar,
    run_date varchar,
    chips_text varchar,               -- chips as written (the suite refuses a share of an accelerator)
    number_problem varchar            -- number columns given as something else, with their text (quarantined)
);
