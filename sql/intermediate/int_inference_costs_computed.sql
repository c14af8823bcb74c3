-- Grain: one row per inference workload x offer x precision. Basis `measured`: the best MLPerf Inference
-- result (tokens/s of the whole system) of this accelerator on the workload's task and scenario, at an
-- accuracy target at least the workload's. A replica is the measured system's chips; an instance holds
-- whole replicas, or a replica spans whole instances.
with workloads as (
    select * from catalog.workloads where kind = 'inference'
),

results as (
    select * from staging.stg_mlperf_inference__results
    where performance_units = 'Tokens/s'
        and division = 'closed'
        and availability = 'available'
        and performance_result > 0
),

offers as (
    select * from intermediate.int_offers_priced
),

matched as (
    select
        workloads.workload_id,
        offers.*,
        results.precision,
        results.accelerators_total as replica_chips,
        results.performance_result as replica_tokens_per_s,
        results.performance_result / results.accelerators_total as tokens_per_s_per_chip,
        replica_instances(results.accelerators_total, offers.accelerator_count) as instances_per_replica,
        replicas_per_instance(results.accelerators_total, offers.accelerator_count) as replicas_per_instance,
        results.source_id as benchmark_source_id,
        results.data_as_of as benchmark_as_of,
        results.source_ref as benchmark_ref,
        'MLPerf Inference ' || results.version || ' ' || results.model || ' ' || results.scenario || ': '
            || results.submitter || ' ' || results.system as benchmark_label
    from workloads
    inner join results
        on results.task = workloads.benchmark_task
        and results.scenario = workloads.benchmark_scenario
        and results.accuracy_target_pct >= workloads.accuracy_target_pct
    inner join offers
        on offers.accelerator_id = results.accelerator_id
        and offers.accelerator_count >= results.accelerators_per_node
),

costed as (
    select
        *,
        instances_per_replica * usd_per_hour as deployment_usd_per_hour,
        replicas_per_instance * replica_tokens_per_s as deployment_tokens_per_s,
        usd_per_million_tokens(
            instances_per_replica * usd_per_hour,
            replicas_per_instance * replica_tokens_per_s
        ) as usd_per_million_tokens
    from matched
),

final as (
    select
        *,
        'measured' as basis,
        workload_id || '|' || offer_id || '|' || precision as candidate_id
    from costed
    qualify row_number() over (
        partition by workload_id, offer_id, precision
        order by usd_per_million_tokens, benchmark_ref
    ) = 1
)

select * from final
