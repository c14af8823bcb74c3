-- marts.estimate_backtest — grain: one row per run x measured result. What the estimator says for each measured
-- result the warehouse holds (same accelerator, chips, precision, model, request shape or tokens), uncalibrated and
-- leave-one-out calibrated, beside the measurement: how good the estimates are, by accelerator family and phase.
with backtest as (
    select * from intermediate.int_estimate_backtest
),

final as (
    select
        getvariable('run_id') as run_id,
        cast(getvariable('as_of') as date) as as_of,
        comparison_id,
        phase,
        family,
        accelerator_id,
        precision,
        precision_source,
        model_id,
        chips,
        measurement_basis,
        precision_doubtful,
        unit,
        measured,
        estimated,
        ratio,
        estimated_without_comm,
        abs_error,
        abs_error_without_comm,
        efficiency_ratio,
        loo_factor,
        cast(loo_measurements as integer) as loo_measurements,
        loo_estimated,
        loo_ratio,
        loo_abs_error,
        cost_ratio,
        loo_cost_ratio,
        benchmark_source_id,
        benchmark_as_of,
        benchmark_ref,
        benchmark_label
    from backtest
)

select * from final
