-- Grain: one row per MLPerf Training system x benchmark landed this run, with the catalog accelerator id.
with source as (
    -- this run's rows, or a stale source's last good ones
    select * from raw.mlperf_training
    semi join staging.stg_ops__source_runs_used using (source_id, run_id)
),

aliases as (
    select * from catalog.accelerator_aliases
),

final as (
    select
        source.source_id,
        source.data_as_of,
        source.row_no,
        source.source_ref,
        source.division,
        source.availability,
        source.submitter,
        source.system,
        source.benchmark,
        aliases.accelerator_id,
        source.accelerator as accelerator_raw,
        cast(source.accelerators_count as integer) as chips,
        source.number_of_nodes as nodes,
        source.accelerators_count / source.number_of_nodes as chips_per_node,
        source.time_to_train_minutes,
        source.energy,
        source.global_batch_size,
        source.samples_to_converge,
        source.details_url,
        -- MLPerf summaries declare no precision: the one models.yaml declares this submission trained at on this chip
        -- (mlperf_training_tasks.<task>.trained_at; the catalog check strips its submitter), and the source saying so
        declared.precision as declared_precision,
        declared.source as precision_source
    from source
    inner join aliases on aliases.alias_key = source.accelerator_key
    left join catalog.mlperf_training_precisions as declared
        on declared.task = source.benchmark and lower(declared.submitter) = lower(trim(source.submitter))
            and declared.accelerator_id = aliases.accelerator_id
)

select * from final
