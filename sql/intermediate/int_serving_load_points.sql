-- Grain: one row per inference workload x offer x precision class x load point. A load point is one concurrency
-- level (or offered request rate) of the user's own serving runs of the workload's model, or one MLPerf Inference
-- round's scenario (Offline, Server, Interactive) of the workload's task; results and runs match offers by the rules
-- of int_inference_measured (accuracy target, divisions, suites, availabilities, accepted precisions, whole
-- replicas per instance or whole instances per replica, accepted terms), but every scenario and every level counts.
-- Per point: USD per million tokens on the offer at full load, and the output tokens/s one user sees: an own run's
-- 1000 / median TPOT (else throughput / concurrency); an MLPerf scenario's 1000 / its p99 TPOT bound, a floor of
-- the speed (Offline has no bound: null). `is_selected` marks the point int_inference_measured keeps for the
-- candidate, the one the workload's latency objective selects; of several results at one point (submitters, setups),
-- that one, else the cheapest.
with workloads as (
    select * from catalog.workloads where kind = 'inference'
),

results as (
    select * from staging.stg_mlperf_inference__results
    where performance_units = 'Tokens/s' and performance_result > 0
),

scenarios as (
    select * from catalog.mlperf_inference_tasks
),

offers as (
    select * from intermediate.int_offers_priced
),

accepted as (
    select * from catalog.workload_precisions
),

runs as (
    select * from staging.stg_benchmark_runs__results
    where kind = 'serving' and output_tokens_per_s > 0
),

selected as (
    select workload_id, offer_id, precision_class, benchmark_ref from intermediate.int_inference_measured
),

mlperf_points as (
    select
        workloads.workload_id,
        offers.offer_id,
        offers.cloud,
        offers.region,
        offers.instance_type,
        offers.pricing_term,
        offers.accelerator_id,
        offers.usd_per_hour,
        results.precision,
        'MLPerf ' || results.version || ' ' || results.scenario_normalised as load_point,
        cast(results.accelerators_total as integer) as replica_chips,
        results.performance_result as replica_tokens_per_s,
        1000 / nullif(scenarios.tpot_ms, 0) as tokens_per_s_per_user,
        case when scenarios.tpot_ms > 0 then 'scenario p99 TPOT bound (a floor)' end as tokens_per_s_per_user_basis,
        scenarios.tpot_ms as tpot_p99_ms,
        scenarios.ttft_ms as ttft_p99_ms,
        replica_instances(results.accelerators_total, offers.accelerator_count) as instances_per_replica,
        replicas_per_instance(results.accelerators_total, offers.accelerator_count) as replicas_per_instance,
        -- the scenario's bounds within the workload's; Offline has none, so it shows no latency a service can rely on
        workloads.is_offline or coalesce(
            scenarios.tpot_ms <= coalesce(workloads.slo_tpot_ms, scenarios.tpot_ms)
            and scenarios.ttft_ms <= coalesce(workloads.slo_ttft_ms, scenarios.ttft_ms), false
        ) as meets_slo,
        results.source_ref as benchmark_ref,
        'MLPerf Inference ' || results.version || ' ' || results.model || ' ' || results.scenario || ': '
            || results.submitter || ' ' || results.system as benchmark_label
    from workloads
    inner join results
        on results.task = workloads.benchmark_task
        and results.accuracy_target_pct >= workloads.accuracy_target_pct
        and list_contains(workloads.benchmark_divisions, lower(results.division))
        and list_contains(workloads.benchmark_suites, lower(results.suite))
        and list_contains(workloads.benchmark_availabilities, lower(results.availability))
    left join scenarios
        on scenarios.task = results.task and scenarios.scenario = results.scenario_normalised
    inner join accepted
        on accepted.workload_id = workloads.workload_id
        and accepted.precision = case when results.precision = 'fp16' then 'bf16' else results.precision end
    inner join offers
        on offers.accelerator_id = results.accelerator_id
        and offers.accelerator_count >= results.accelerators_per_node
        and offer_term_accepted(workloads.pricing_terms, offers.pricing_term, offers.term_months, workloads.months)
),

own_points as (
    select
        workloads.workload_id,
        offers.offer_id,
        offers.cloud,
        offers.region,
        offers.instance_type,
        offers.pricing_term,
        offers.accelerator_id,
        offers.usd_per_hour,
        runs.precision,
        coalesce('concurrency ' || cast(runs.concurrency as bigint), runs.request_rate || ' requests/s offered',
                 'own run ' || runs.source_ref) as load_point,
        runs.chips as replica_chips,
        runs.output_tokens_per_s as replica_tokens_per_s,
        coalesce(1000 / nullif(runs.tpot_p50_ms, 0), runs.output_tokens_per_s / nullif(runs.concurrency, 0))
            as tokens_per_s_per_user,
        case
            when runs.tpot_p50_ms > 0 then 'median TPOT'
            when runs.concurrency > 0 then 'throughput / concurrency'
        end as tokens_per_s_per_user_basis,
        runs.tpot_p99_ms,
        runs.ttft_p99_ms,
        replica_instances(runs.chips, offers.accelerator_count) as instances_per_replica,
        replicas_per_instance(runs.chips, offers.accelerator_count) as replicas_per_instance,
        workloads.is_offline or coalesce(
            runs.tpot_p99_ms <= coalesce(workloads.slo_tpot_ms, runs.tpot_p99_ms)
            and runs.ttft_p99_ms <= coalesce(workloads.slo_ttft_ms, runs.ttft_p99_ms), false
        ) as meets_slo,
        runs.source_ref as benchmark_ref,
        'own run: ' || coalesce(runs.run_source, runs.source_id) || ', ' || runs.chips || ' x ' || runs.accelerator_id
            || coalesce(', concurrency ' || cast(runs.concurrency as bigint), '')
            || coalesce(', ' || runs.request_rate || ' requests/s offered', '')
            || coalesce(' (' || runs.run_date || ')', '') as benchmark_label
    from workloads
    inner join runs on runs.model_id = workloads.model_id
    inner join accepted
        on accepted.workload_id = workloads.workload_id and accepted.precision = runs.precision_class
    inner join offers
        on offers.accelerator_id = runs.accelerator_id
        and (offers.accelerator_count >= runs.chips or runs.chips % offers.accelerator_count = 0)
        and offer_term_accepted(workloads.pricing_terms, offers.pricing_term, offers.term_months, workloads.months)
),

costed as (
    select
        *,
        case when precision in ('fp16', 'bf16') then 'bf16' else precision end as precision_class,
        usd_per_million_tokens(instances_per_replica * usd_per_hour, replicas_per_instance * replica_tokens_per_s)
            as usd_per_million_tokens
    from (select * from mlperf_points union all by name select * from own_points)
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
