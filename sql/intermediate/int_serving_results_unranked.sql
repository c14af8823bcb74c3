-- Grain: one row per inference workload x MLPerf Inference result of its benchmark task that the workload's own rules
-- keep out of its ranking, with why: a precision the workload does not list, an accuracy target below its own, or a
-- division, suite or availability it does not accept (the filters of int_serving_results_matched). A decision that
-- asks for a measurement says which one the warehouse holds and why it is not ranked.
with workloads as (
    select * from catalog.workloads where kind = 'inference' and benchmark_task is not null
),

results as (
    select * from staging.stg_mlperf_inference__results where accelerator_id is not null
),

listed as (
    select workload_id, string_agg(precision, ', ' order by precision) as listed_precisions
    from catalog.workload_precisions
    group by workload_id
),

final as (
    select
        workloads.workload_id,
        results.accelerator_id,
        results.precision,
        results.scenario_normalised = workloads.benchmark_scenario as is_workload_scenario,
        'MLPerf Inference ' || results.version || ' ' || results.model || ' ' || results.scenario || ' at '
            || results.precision || ' (' || results.submitter || ' ' || results.system || ')' as measurement,
        case
            when not exists (
                select 1 from catalog.workload_precisions as accepted
                where accepted.workload_id = workloads.workload_id
                    and precision_class(accepted.precision) = precision_class(results.precision)
            ) then
                results.precision || ' is not among the precisions the workload lists (' || listed.listed_precisions
                || ' in workloads.yaml)'
            when results.accuracy_target_pct < workloads.accuracy_target_pct then
                'its accuracy target, ' || results.accuracy_target_pct || '%, is below the workload''s '
                || workloads.accuracy_target_pct || '%'
            when not (list_contains(workloads.benchmark_divisions, lower(results.division))
                      and list_contains(workloads.benchmark_suites, lower(results.suite))
                      and list_contains(workloads.benchmark_availabilities, lower(results.availability))) then
                'its division, suite or availability (' || results.division || ', ' || results.suite || ', '
                || results.availability || ') is not one the workload accepts'
        end as unranked_reason
    from workloads
    inner join results on results.task = workloads.benchmark_task
    left join listed using (workload_id)
)

select * from final where unranked_reason is not null
