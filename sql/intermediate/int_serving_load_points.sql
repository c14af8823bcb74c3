-- Grain: one row per inference workload x offer x precision class x load point. A load point is one concurrency
-- level (or offered request rate) of the user's own serving runs of the workload's model, or one MLPerf Inference
-- round's scenario (Offline, Server, Interactive) of the workload's task, as int_serving_results_matched matched
-- them to offers (every scenario and every level). Per point: USD per million tokens on the offer at full load, and
-- the output tokens/s one user sees (see int_serving_results_matched). `is_selected` marks the point
-- int_inference_measured keeps for the candidate, the one the workload's latency objective selects; of several
-- results at one point (submitters, setups), that one, else the cheapest.
with matched as (
    -- points of another request shape, whose replica the workload's instances cannot hold, or throughput-only runs
    -- for a service, are not this workload's
    select * from intermediate.int_serving_results_matched
    where shape_matches and replica_fits and (run_kind is distinct from 'offline' or is_offline)
),

selected as (
    select workload_id, offer_id, precision_class, benchmark_ref from intermediate.int_inference_measured
),

costed as (
    -- as int_inference_costs_computed prices the selected point: offline work on reclaimable capacity pays for the
    -- hours it loses restarting after reclaims
    select
        matched.*,
        usd_per_million_tokens(instances_per_replica * usd_per_hour, replicas_per_instance * replica_tokens_per_s)
            / (1 - coalesce(offline_reclaim_loss(matched.is_offline, matched.instances_per_replica,
                                                 rates.per_instance_month, rates.restart_hours), 0))
            as usd_per_million_tokens
    from matched
    left join catalog.interruption_rates as rates
        on rates.pricing_term = matched.pricing_term and rates.cloud = matched.cloud
),

final as (
    select
        costed.*,
        selected.benchmark_ref is not null as is_selected
    from costed
    left join selected
        on selected.workload_id = costed.workload_id
        and selected.offer_id = costed.offer_id
        and selected.precision_class = costed.precision_class
        and selected.benchmark_ref = costed.benchmark_ref
    qualify row_number() over (
        partition by costed.workload_id, costed.offer_id, costed.precision_class, costed.load_point
        order by is_selected desc, costed.usd_per_million_tokens, costed.benchmark_ref
    ) = 1
)

select * from final
