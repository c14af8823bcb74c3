-- marts.training_costs — grain: one row per run x training workload x offer x chip count.
-- Cost of one completed training run: measured (MLPerf time-to-train), scaled (published or MLPerf-derived
-- MFU) or estimated (declared MFU), priced on whole instances with the pricing term's interruption overhead.
with costs as (
    select * from intermediate.int_training_costs_computed
),

final as (
    select
        getvariable('run_id') as run_id,
        cast(getvariable('as_of') as date) as as_of,
        workload_id,
        candidate_id,
        offer_id,
        cloud,
        region,
        instance_type,
        pricing_term,
        accelerator_id,
        accelerator_count,
        precision,
        chips,
        instances,
        usd_per_hour,
        usd_per_chip_hour,
        mfu,
        time_to_train_minutes,
        run_hours,
        comm_share,
        interruption_overhead,
        expected_interruptions,
        interruption_basis,
        completed_run_usd,
        energy_kwh,
        energy_usd,
        energy_label,
        kgco2e,
        basis,
        price_source_id,
        price_as_of,
        price_ref,
        benchmark_label,
        benchmark_source_id,
        benchmark_as_of,
        benchmark_ref
    from costs
    where past_deadline_reason is null  -- listed in excluded_candidates
)

select * from final
