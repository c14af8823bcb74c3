-- raw.mlperf_inference: one row per summary_results.json result, as landed.
create table if not exists raw.mlperf_inference (
    run_id varchar not null,
    as_of date not null,
    source_id varchar not null,
    data_as_of date not null,
    row_no integer not null,
    source_ref varchar not null,
    result_id varchar,
    version varchar,
    submitter varchar,
    availability varchar,
    division varchar,
    suite varchar,
    system varchar,
    model varchar,                    -- e.g. llama2-70b-99 (task + accuracy target)
    scenario varchar,
    accelerator varchar,              -- the submitter's string, mapped to a catalog id through aliases
    accelerator_key varchar,          -- the same, case and whitespace normalised
    weight_data_types varchar,
    performance_units varchar,
    details_url varchar,
    accelerators_per_node double,     -- MLPerf `a#`
    nodes double,
    performance_result double,        -- null when Performance_Result is not a number (the row is quarantined)
    has_power boolean,
    power_result double,              -- MLPerf `Power_Result`, where the result was measured for power;
                                      -- null when it is not a number (the row is quarantined)
    power_units varchar,
    performance_result_text varchar,  -- MLPerf `Performance_Result` as published
    precision varchar,                -- weight_data_types as hweval names it (`float8` -> fp8: names.precision_name)
    accelerators_total double,        -- accelerators_per_node x nodes, bounded by the suite
    power_result_text varchar         -- MLPerf `Power_Result` as published (null when empty)
);
