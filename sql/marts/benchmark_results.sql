-- marts.benchmark_results — grain: one row per run x benchmark result the run read (MLPerf rounds, the user's
-- own runs), identified across runs by `result_key`, so the changes mart can list new and withdrawn results.
with results as (
    select * from intermediate.int_benchmark_results_listed
),

final as (
    select
        getvariable('run_id') as run_id,
        cast(getvariable('as_of') as date) as as_of,
        result_key,
        source_id,
        accelerator_id,
        task,
        result_label,
        source_ref,
        data_as_of
    from results
)

select * from final
