-- Grain: one row per MLPerf Inference result landed this run, with the catalog accelerator id (through the
-- declared aliases), total accelerators (`a#` is per node), the task without its accuracy suffix and the target.
with source as (
    -- this run's rows, or a stale source's last good ones
    select * from raw.mlperf_inference
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
        source.result_id,
        source.version,
        source.submitter,
        source.system,
        source.division,
        source.suite,
        source.availability,
        source.model,
        -- later rounds publish interactive results as model `<task>-interactive-99` under scenario Server
        regexp_replace(regexp_replace(source.model, '-99(\.9)?$', ''), '-interactive$', '') as task,
        case
            when source.model like '%-99.9' then 99.9::double
            else 99.0::double  -- `-99`, or a benchmark with a single target (llama3.1-8b: 99% of the reference)
        end as accuracy_target_pct,
        source.scenario,
        case when source.model like '%-interactive-%' then 'Interactive' else source.scenario end
            as scenario_normalised,
        aliases.accelerator_id,
        source.accelerator as accelerator_raw,
        source.accelerators_per_node,
        source.nodes,
        source.accelerators_per_node * source.nodes as accelerators_total,
        lower(source.weight_data_types) as precision,
        source.performance_result,
        source.performance_units,
        source.has_power,
        source.power_result,
        source.power_units
    from source
    inner join aliases on aliases.alias_key = source.accelerator_key
)

select * from final
