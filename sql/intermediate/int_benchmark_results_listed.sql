-- Grain: one row per benchmark result this run reads (MLPerf Inference, MLPerf Training, the user's own runs),
-- with a key that identifies the result across runs: its source and natural key, not its file row number.
with inference as (
    select * from staging.stg_mlperf_inference__results
),

training as (
    select * from staging.stg_mlperf_training__results
),

own_runs as (
    select
        *,
        -- the free-text fields with their '|' (and '\') escaped: "our run|2026-11-15" is no run of "our run" again
        concat_ws('|', source_id, kind, accelerator_id,
                  replace(replace(coalesce(instance_type, ''), '\', '\\'), '|', '\|'), chips, model_id, precision,
                  coalesce(concurrency::varchar, ''), coalesce(request_rate::varchar, ''),
                  coalesce(input_tokens::varchar, ''), coalesce(output_tokens::varchar, ''),
                  coalesce(sequence_length::varchar, ''),
                  replace(replace(coalesce(run_source, ''), '\', '\\'), '|', '\|')) as setup_key
    from staging.stg_benchmark_runs__results
),

own_runs_ordered as (
    -- a setup's runs in the file's order (row_no; the text of source_ref put "row 10" before "row 9"): a run
    -- appended to the file, whatever its date, changes no key the setup's runs had
    select
        *,
        row_number() over (partition by setup_key order by row_no) as nth_of_setup,
        row_number() over (partition by setup_key, run_date order by row_no)
            - if(run_date is not distinct from first_value(run_date) over (partition by setup_key order by row_no),
                 1, 0) as nth_again_that_day
    from own_runs
),

listed as (
    select
        source_id,
        concat_ws('|', source_id, result_id, model, scenario) as result_key,
        accelerator_id,
        task,
        system || ' (' || submitter || '), ' || model || ' ' || scenario as result_label,
        source_ref,
        data_as_of
    from inference
    union all
    select
        source_id,
        -- two submissions of one system name differ by their system description file: only then is it in the key,
        -- so the keys of results that never shared a name stay what they were
        concat_ws('|', source_id, submitter, system, benchmark, chips, division)
            || case when count(*) over (partition by source_id, submitter, system, benchmark, chips, division) > 1
                then '|' || coalesce(details_url, '') else '' end as result_key,
        accelerator_id,
        benchmark as task,
        system || ' (' || submitter || '), ' || benchmark || ' on ' || format('{:,}', chips) || ' chips'
            as result_label,
        source_ref,
        data_as_of
    from training
    union all
    select
        source_id,
        -- a setup run again is a result of its own (a new result the night its row comes): the key of the setup's
        -- first run in the file stays what it was, a later run's adds its date (or "undated"), and the second and
        -- later of these on one date their number that day (|2026-11-15, |2026-11-15|2, ...)
        setup_key || case when nth_of_setup > 1
                          then '|' || coalesce(run_date::varchar, 'undated')
                               || if(nth_again_that_day > 1, '|' || nth_again_that_day, '')
                          else '' end as result_key,
        accelerator_id,
        model_id as task,
        -- a published figure may give no chip count (a per-GPU throughput or MFU): the label says none
        kind || ' run of ' || model_id || coalesce(' ' || precision, '') || ' on '
            || coalesce(chips || ' x ', '') || accelerator_id || if(chips is null, ' (chip count not given)', '')
            || coalesce(' at concurrency ' || concurrency, '') as result_label,
        source_ref,
        data_as_of
    from own_runs_ordered
),

final as (
    -- a result listed twice in one source (exact copies are quarantined; this keeps the key unique regardless)
    select * from listed
    qualify row_number() over (partition by result_key order by source_ref) = 1
)

select * from final
