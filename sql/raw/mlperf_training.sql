-- raw.mlperf_training: one row per system x benchmark of the result summarizer's output, as landed.
create table if not exists raw.mlperf_training (
    run_id varchar not null,
    as_of date not null,
    source_id varchar not null,
    data_as_of date not null,
    row_no integer not null,
    source_ref varchar not null,
    division varchar,
    availability varchar,
    submitter varchar,
    system varchar,
    accelerator varchar,
    accelerator_key varchar,
    accelerators_count double,
    number_of_nodes double,
    framework varchar,
    details_url varchar,
    benchmark varchar,
    time_to_train_text varchar,
    time_to_train_minutes double,
    energy double,
    global_batch_size double,
    samples_to_converge double,
    -- `<benchmark>:Energy`, `:GBS`, `:samples_to_converge` as written (null when empty); a figure given but not a
    -- number lands null above and its row is quarantined
    energy_text varchar,
    global_batch_size_text varchar,
    samples_to_converge_text varchar
);
