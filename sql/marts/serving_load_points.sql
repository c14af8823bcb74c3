-- marts.serving_load_points — grain: one row per run x inference workload x offer x precision class x load point.
-- Cost against interactivity: at each load point a benchmark measured (an own run's concurrency level, an MLPerf
-- scenario), USD per million tokens on the offer and the output tokens/s each user sees; the point the workload's
-- latency objective selects is marked.
with points as (
    select * from intermediate.int_serving_load_points
),

final as (
    select
        getvariable('run_id') as run_id,
        cast(getvariable('as_of') as date) as as_of,
        workload_id,
        workload_id || '|' || offer_id || '|' || precision_class as candidate_id,
        offer_id,
        cloud,
        region,
        instance_type,
        pricing_term,
        accelerator_id,
        precision,
        precision_class,
        load_point,
        replica_chips,
        replica_tokens_per_s,
        tokens_per_s_per_user,
        tokens_per_s_per_user_basis,
        tpot_p99_ms,
        ttft_p99_ms,
        usd_per_million_tokens,
        meets_slo,
        is_selected,
        benchmark_label,
        benchmark_ref
    from points
)

select * from final
