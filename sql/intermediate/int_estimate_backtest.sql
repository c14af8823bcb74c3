-- Grain: one row per measured result (int_serving_backtest, int_training_backtest) with its leave-one-out
-- prediction: the estimate calibrated by the *other* measurements of the same accelerator (serving: at the same
-- precision class and model; own runs first; never another result of the same submission or setup), as a calibrated estimate
-- for a workload would be; a result whose declared precision is doubtful calibrates no other. No other measurement: the prediction is the uncalibrated estimate (loo_measurements 0).
-- Serving predictions are re-estimated with the fitted efficiencies, the link's included (the batch the objectives
-- allow changes with them); a training prediction is the estimate over the fitted factor (time scales with 1 / MFU).
with serving as (
    select * from intermediate.int_serving_backtest
),

training as (
    select * from intermediate.int_training_backtest
),

comparisons as (
    select comparison_id, phase, accelerator_id, precision_class, model_id, efficiency_ratio, measurement_basis,
        setup_key, precision_doubtful
    from serving
    union all by name
    select comparison_id, phase, accelerator_id, '*' as precision_class, '*' as model_id, efficiency_ratio,
        measurement_basis, setup_key, precision_doubtful
    from training
),

others as (
    select
        this.comparison_id,
        other.efficiency_ratio,
        other.comparison_id as other_id,
        other.measurement_basis = 'own run' as is_own
    from comparisons as this
    inner join comparisons as other
        on other.phase = this.phase
        and other.accelerator_id = this.accelerator_id
        and other.setup_key <> this.setup_key
        and other.precision_class = this.precision_class
        and other.model_id = this.model_id
        and other.efficiency_ratio > 0
        and not other.precision_doubtful
),

chosen as (
    select *
    from others
    qualify dense_rank() over (partition by comparison_id order by is_own desc) = 1
),

loo as (
    select
        comparison_id,
        -- the mean taken in one fixed order: a parallel avg() may round the last bit differently run to run
        exp(list_avg(list(ln(efficiency_ratio) order by other_id, efficiency_ratio))) as loo_factor,
        count(*) as loo_measurements
    from chosen
    group by comparison_id
),

serving_loo as (
    -- re-estimate at the fitted efficiencies, over the same tensor-parallel groups
    select
        comparison_id,
        max(serving_tokens_per_s(
            serving_batch(fixed_batch, weights_gb, kv_bytes_per_token, input_tokens, output_tokens, params_active,
                          peak_tflops, memory_gb, usable_memory_fraction, memory_bandwidth_tbps, bandwidth_efficiency,
                          compute_efficiency, group_chips, slo_tpot_ms, comm_s_per_token),
            weights_gb, kv_bytes_per_token, input_tokens, output_tokens, params_active, peak_tflops,
            memory_bandwidth_tbps, bandwidth_efficiency, compute_efficiency, group_chips, slo_ttft_ms, comm_s_per_token)
            / group_chips) as loo_estimated
    from (
        select
            -- every group the estimate tried, at the fitted efficiencies (the row keeps only its best group's)
            serving.* exclude (group_chips, comm_s_per_token)
                replace (serving.bandwidth_efficiency * loo.loo_factor as bandwidth_efficiency,
                         serving.compute_efficiency * loo.loo_factor as compute_efficiency),
            groups.range as group_chips,
            coalesce(tp_comm_s_per_token(serving.layers, serving.hidden, groups.range,
                                         serving.link_gb_per_s / 2 * loo.loo_factor), 0) as comm_s_per_token
        from serving
        inner join loo using (comparison_id)
        inner join range(1, 257) as groups
            on (serving.fixed_batch is null and serving.group_limit % groups.range = 0)
            or (serving.fixed_batch is not null and groups.range = serving.chips)
    )
    group by comparison_id
),

unioned as (
    select
        serving.comparison_id, serving.phase, serving.family, serving.accelerator_id, serving.precision,
        serving.model_id, serving.chips, serving.measurement_basis, serving.unit, serving.measured,
        serving.estimated, serving.estimated_without_comm, serving.efficiency_ratio, serving.setup_key,
        serving.precision_doubtful,
        null::varchar as precision_source,
        coalesce(loo.loo_factor, 1.0) as loo_factor,
        coalesce(loo.loo_measurements, 0) as loo_measurements,
        coalesce(serving_loo.loo_estimated, serving.estimated) as loo_estimated,
        serving.benchmark_source_id, serving.benchmark_as_of, serving.benchmark_ref, serving.benchmark_label
    from serving
    left join loo using (comparison_id)
    left join serving_loo using (comparison_id)
    union all by name
    select
        training.comparison_id, training.phase, training.family, training.accelerator_id, training.precision,
        training.model_id, training.chips, training.measurement_basis, training.unit, training.measured,
        training.estimated, training.estimated_without_comm, training.efficiency_ratio, training.setup_key,
        training.precision_doubtful,
        training.precision_source,
        coalesce(loo.loo_factor, 1.0) as loo_factor,
        coalesce(loo.loo_measurements, 0) as loo_measurements,
        training.estimated / coalesce(loo.loo_factor, 1.0) as loo_estimated,
        training.benchmark_source_id, training.benchmark_as_of, training.benchmark_ref, training.benchmark_label
    from training
    left join loo using (comparison_id)
),

final as (
    select
        *,
        estimated / measured as ratio,
        loo_estimated / measured as loo_ratio,
        abs(loo_estimated / measured - 1) as loo_abs_error,
        -- the uncalibrated estimate's error with and without the communication terms (issue 17's before/after)
        abs(estimated / measured - 1) as abs_error,
        abs(estimated_without_comm / measured - 1) as abs_error_without_comm,
        -- what the outcome would really cost for each dollar the estimate says: serving costs scale with
        -- 1 / throughput, training with time
        case phase when 'serving' then estimated / measured else measured / estimated end as cost_ratio,
        case phase when 'serving' then loo_estimated / measured else measured / loo_estimated end as loo_cost_ratio
    from unioned
)

select * from final
