-- Grain: one row per accelerator x model x MLPerf scenario x precision class measured for power. MLPerf Inference
-- power results give the whole system's average power at the wall (`Power_Result`, Watts) while it served
-- `Performance_Result` tokens/s: joules per output token = watts / tokens per second, the energy the hardware really
-- drew (accelerators, host, fans), and its inverse, output tokens per second per watt. Where a chip has several, the
-- most efficient one (least energy per token) is kept, with its result named. A result whose declared precision the
-- staging cross-check doubts says so in its label.
with results as (
    select * from staging.stg_mlperf_inference__results
    where power_units = 'Watts' and power_result > 0
        and performance_units = 'Tokens/s' and performance_result > 0 and accelerators_total > 0
),

tasks as (
    select * from catalog.mlperf_inference_tasks
),

final as (
    select
        results.accelerator_id,
        tasks.model as model_id,
        results.scenario_normalised as scenario,
        precision_class(results.precision) as precision_class,
        results.power_result / results.performance_result as joules_per_token,
        results.performance_result / results.power_result as tokens_per_s_per_watt,
        results.power_result as system_watts,
        results.performance_result as system_tokens_per_s,
        results.source_id as power_source_id,
        results.data_as_of as power_as_of,
        results.source_ref as power_ref,
        'MLPerf Inference ' || results.version || ' ' || results.model || ' ' || results.scenario_normalised
            || ' power: ' || results.submitter || ' ' || results.system || ', '
            || printf('%,.0f', results.power_result) || ' W at ' || printf('%,.1f', results.performance_result)
            || ' tokens/s' || coalesce('; precision doubtful: ' || results.precision_note, '') as power_label
    from results
    inner join tasks on tasks.task = results.task and tasks.scenario = results.scenario_normalised
    where results.accelerator_id is not null
    qualify row_number() over (
        partition by results.accelerator_id, tasks.model, results.scenario_normalised,
            precision_class(results.precision)
        order by results.power_result / results.performance_result, results.source_ref
    ) = 1
)

select * from final
