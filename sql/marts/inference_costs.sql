-- marts.inference_costs — grain: one row per run x inference workload x offer x precision class.
-- Throughput (measured from MLPerf, else the roofline estimate with batching), USD per million tokens, and for
-- services the whole instances sized for peak traffic, utilization, monthly and lifetime cost, and USD per
-- million successful requests.
with costs as (
    select * from intermediate.int_inference_costs_computed
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
        precision_class,
        cast(replica_chips as integer) as replica_chips,
        instances_per_replica,
        replicas_per_instance,
        batch,
        replica_tokens_per_s,
        tokens_per_s_per_chip,
        deployment_usd_per_hour,
        deployment_tokens_per_s,
        deployment_requests_per_s,
        usd_per_hour,
        usd_per_chip_hour,
        usd_per_million_tokens,
        usd_per_million_total_tokens,
        prefill_share,
        comm_share,
        usd_per_million_input_tokens,
        usd_per_million_output_tokens,
        deployments,
        spare_deployments,
        reclaim_loss,
        interruption_basis,
        instances,
        utilization,
        monthly_usd,
        success_rate,
        usd_per_million_successful_requests,
        training_usd,
        lifetime_usd,
        inference_share,
        outcome_metric,
        outcome_value,
        energy_basis,
        kwh_per_million_tokens,
        tokens_per_s_per_watt,
        energy_usd_per_million_tokens,
        energy_label,
        power_source_id,
        power_as_of,
        basis,
        price_source_id,
        price_as_of,
        price_ref,
        benchmark_label,
        precision_doubtful,
        benchmark_source_id,
        benchmark_as_of,
        benchmark_ref
    from costs
)

select * from final
