-- Grain: one row per measured serving result this run holds (an MLPerf Inference LLM result of a task that
-- catalog.mlperf_inference_tasks describes, or a serving row of the user's own runs that gives its request shape),
-- with what the roofline estimator says for the same accelerator, chips, precision, model, request shape and latency
-- bounds at the family's declared efficiencies (`estimated_per_chip`), and the measured/estimated ratio that
-- calibrates the efficiencies (int_estimate_calibration). MLPerf: the system's chips hold replicas of the best
-- tensor-parallel group that tiles one node, at the largest batch memory and the scenario's TPOT bound allow, and
-- the scenario's TTFT bound must hold. Own run: one replica on all its chips, at its concurrency as the batch. A
-- system's -99 and -99.9 results at one throughput count once; a result whose declared precision the staging
-- cross-check doubts is kept and marked (`precision_doubtful`): it calibrates nothing. The estimate charges the
-- group's tensor-parallel all-reduces over the chips' link (the system's own node); `estimated_without_comm` is the
-- same estimate without them, so the back-test shows the error before and after that term.
with tasks as (
    select * from catalog.mlperf_inference_tasks
),

models as (
    select * from catalog.models
),

accelerators as (
    select * from catalog.accelerators
),

defaults as (
    select * from catalog.family_defaults
),

peaks as (
    select * from intermediate.int_accelerator_precisions_listed
),

mlperf as (
    select
        results.source_ref as comparison_id,
        'MLPerf Inference' as measurement_basis,
        -- one submission (round, submitter, system): its results never calibrate each other's predictions
        results.version || '|' || results.submitter || '|' || results.system as setup_key,
        results.accelerator_id,
        results.precision,
        tasks.model as model_id,
        cast(results.accelerators_total as integer) as chips,
        cast(results.accelerators_per_node as integer) as group_limit,
        null::integer as fixed_batch,
        tasks.input_tokens,
        tasks.output_tokens,
        tasks.tpot_ms as slo_tpot_ms,
        tasks.ttft_ms as slo_ttft_ms,
        results.performance_result / results.accelerators_total as measured_per_chip,
        results.source_id as benchmark_source_id,
        results.data_as_of as benchmark_as_of,
        results.source_ref as benchmark_ref,
        'MLPerf Inference ' || results.version || ' ' || results.model || ' ' || results.scenario_normalised || ': '
            || results.submitter || ' ' || results.system
            || coalesce('; precision doubtful: ' || results.precision_note, '') as benchmark_label,
        results.precision_doubtful
    from staging.stg_mlperf_inference__results as results
    inner join tasks on tasks.task = results.task and tasks.scenario = results.scenario_normalised
    where results.performance_units = 'Tokens/s' and results.performance_result > 0
        and results.accelerators_total > 0
    -- a system's -99 and -99.9 results at the same throughput are one measurement, counted once
    qualify row_number() over (
        partition by results.version, results.submitter, results.system, results.task, results.scenario_normalised,
            results.precision, results.performance_result
        order by results.source_ref
    ) = 1
),

own_runs as (
    select
        runs.source_ref as comparison_id,
        'own run' as measurement_basis,
        -- one setup's concurrency levels are one measurement of it
        runs.source_id || '|' || runs.accelerator_id || '|' || runs.chips || '|' || runs.model_id || '|'
            || runs.precision || '|' || coalesce(runs.instance_type, '') as setup_key,
        runs.accelerator_id,
        runs.precision,
        runs.model_id,
        runs.chips,
        runs.chips as group_limit,
        cast(runs.concurrency as integer) as fixed_batch,
        cast(runs.input_tokens as bigint) as input_tokens,
        cast(runs.output_tokens as bigint) as output_tokens,
        null::double as slo_tpot_ms,
        null::double as slo_ttft_ms,
        runs.output_tokens_per_s / runs.chips as measured_per_chip,
        runs.source_id as benchmark_source_id,
        runs.data_as_of as benchmark_as_of,
        runs.source_ref as benchmark_ref,
        'own run: ' || coalesce(runs.run_source, runs.source_id) || ', ' || runs.chips || ' x ' || runs.accelerator_id
            || coalesce(', concurrency ' || cast(runs.concurrency as bigint), '') as benchmark_label,
        false as precision_doubtful
    from staging.stg_benchmark_runs__results as runs
    where runs.kind in ('serving', 'offline') and runs.output_tokens_per_s > 0 and runs.chips > 0
        and runs.input_tokens > 0 and runs.output_tokens > 0
),

cases as (
    select
        measured.*,
        precision_class(measured.precision) as precision_class,
        accelerators.family,
        accelerators.memory_gb,
        accelerators.memory_bandwidth_tbps,
        accelerators.link_gb_per_s,
        models.layers,
        models.hidden,
        defaults.usable_memory_fraction,
        defaults.bandwidth_efficiency,
        defaults.compute_efficiency,
        peaks.peak_tflops,
        coalesce(models.active_params, models.params) as params_active,
        weights_gb(models.params, measured.precision) as weights_gb,
        kv_cache_bytes_per_token(models.layers, models.kv_heads, models.head_dim,
                                 case when bytes_per_value(measured.precision) >= 2 then 'bf16' else 'fp8' end)
            as kv_bytes_per_token
    from (select * from mlperf union all by name select * from own_runs) as measured
    inner join models on models.model_id = measured.model_id
    inner join accelerators on accelerators.accelerator_id = measured.accelerator_id
    inner join defaults on defaults.family = accelerators.family
    left join peaks on peaks.accelerator_id = measured.accelerator_id and peaks.precision = measured.precision
    where bytes_per_value(measured.precision) is not null
),

estimated as (
    -- every tensor-parallel group that tiles the system's node (own runs: all the run's chips), at the family's
    -- declared efficiencies
    select
        *,
        serving_batch(fixed_batch, weights_gb, kv_bytes_per_token, input_tokens, output_tokens, params_active,
                      peak_tflops, memory_gb, usable_memory_fraction, memory_bandwidth_tbps, bandwidth_efficiency,
                      compute_efficiency, group_chips, slo_tpot_ms, comm_s_per_token) as batch,
        serving_batch(fixed_batch, weights_gb, kv_bytes_per_token, input_tokens, output_tokens, params_active,
                      peak_tflops, memory_gb, usable_memory_fraction, memory_bandwidth_tbps, bandwidth_efficiency,
                      compute_efficiency, group_chips, slo_tpot_ms, 0) as batch_without_comm
    from (
        select
            cases.*,
            groups.range as group_chips,
            -- inside the system's node, at half the chip's published link figure each way (0 without a figure)
            coalesce(tp_comm_s_per_token(cases.layers, cases.hidden, groups.range, cases.link_gb_per_s / 2), 0)
                as comm_s_per_token
        from cases
        inner join range(1, 257) as groups
            on (cases.fixed_batch is null and cases.group_limit % groups.range = 0)
            or (cases.fixed_batch is not null and groups.range = cases.chips)
    )
),

served as (
    select
        *,
        serving_tokens_per_s(batch, weights_gb, kv_bytes_per_token, input_tokens, output_tokens, params_active,
                             peak_tflops, memory_bandwidth_tbps, bandwidth_efficiency, compute_efficiency,
                             group_chips, slo_ttft_ms, comm_s_per_token) / group_chips as estimated_per_chip,
        -- the best group without the all-reduce term (the estimate before it)
        max(serving_tokens_per_s(batch_without_comm, weights_gb, kv_bytes_per_token, input_tokens, output_tokens,
                                 params_active, peak_tflops, memory_bandwidth_tbps, bandwidth_efficiency,
                                 compute_efficiency, group_chips, slo_ttft_ms, 0) / group_chips)
            over (partition by comparison_id) as estimated_without_comm
    from estimated
),

final as (
    select
        comparison_id,
        'serving' as phase,
        family,
        accelerator_id,
        precision,
        precision_class,
        model_id,
        chips,
        measurement_basis,
        'output tokens/s per chip' as unit,
        measured_per_chip as measured,
        estimated_per_chip as estimated,
        measured_per_chip / estimated_per_chip as efficiency_ratio,
        estimated_without_comm,
        comm_s_per_token,
        layers,
        hidden,
        link_gb_per_s,
        group_chips,
        cast(batch as integer) as batch,
        setup_key,
        precision_doubtful,
        group_limit, fixed_batch, input_tokens, output_tokens, slo_tpot_ms, slo_ttft_ms, weights_gb,
        kv_bytes_per_token, params_active, peak_tflops, memory_gb, usable_memory_fraction, memory_bandwidth_tbps,
        bandwidth_efficiency, compute_efficiency,
        benchmark_source_id,
        benchmark_as_of,
        benchmark_ref,
        benchmark_label
    from served
    where estimated_per_chip is not null
    qualify row_number() over (partition by comparison_id order by estimated_per_chip desc, group_chips) = 1
)

select * from final
