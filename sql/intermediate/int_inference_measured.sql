-- Grain: one row per inference workload x offer x precision class (16-bit results count as bf16). Basis
-- `measured`: the best MLPerf Inference result (output tokens/s of the whole system) of this accelerator on the
-- workload's task and scenario, at an accuracy target at least the workload's and at a precision the workload
-- accepts; or the user's own run of the workload's model on this accelerator (benchmark_runs): of a setup's
-- concurrency levels, the fastest whose p99 TTFT and TPOT meet the workload's SLO (any level for offline work),
-- with its measured success rate. A replica is the measured system's chips; an instance holds whole replicas,
-- or a replica spans whole instances. A result whose declared precision the staging cross-check doubts says so
-- in its label and `precision_doubtful` (an own run: false).
with workloads as (
    select * from catalog.workloads where kind = 'inference'
),

results as (
    select * from staging.stg_mlperf_inference__results
    where performance_units = 'Tokens/s' and performance_result > 0
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

matched as (
    select
        workloads.workload_id,
        offers.*,
        results.precision,
        cast(results.accelerators_total as integer) as replica_chips,
        results.performance_result as replica_tokens_per_s,
        results.performance_result / results.accelerators_total as tokens_per_s_per_chip,
        replica_instances(results.accelerators_total, offers.accelerator_count) as instances_per_replica,
        replicas_per_instance(results.accelerators_total, offers.accelerator_count) as replicas_per_instance,
        results.source_id as benchmark_source_id,
        results.data_as_of as benchmark_as_of,
        results.source_ref as benchmark_ref,
        'MLPerf Inference ' || results.version || ' ' || results.model || ' ' || results.scenario || ': '
            || results.submitter || ' ' || results.system
            || coalesce('; precision doubtful: ' || results.precision_note, '') as benchmark_label,
        results.precision_doubtful,
        null::double as run_success_rate
    from workloads
    inner join results
        on results.task = workloads.benchmark_task
        and results.scenario_normalised = workloads.benchmark_scenario
        and results.accuracy_target_pct >= workloads.accuracy_target_pct
        -- the divisions, suites and availabilities the workload declares it accepts
        and list_contains(workloads.benchmark_divisions, lower(results.division))
        and list_contains(workloads.benchmark_suites, lower(results.suite))
        and list_contains(workloads.benchmark_availabilities, lower(results.availability))
    inner join accepted
        on accepted.workload_id = workloads.workload_id
        and accepted.precision = case when results.precision = 'fp16' then 'bf16' else results.precision end
    inner join offers
        on offers.accelerator_id = results.accelerator_id
        and offers.accelerator_count >= results.accelerators_per_node
        and offer_term_accepted(workloads.pricing_terms, offers.pricing_term, offers.term_months, workloads.months)
),

own_runs as (
    select
        workloads.workload_id,
        offers.*,
        runs.precision,
        runs.chips as replica_chips,
        runs.output_tokens_per_s as replica_tokens_per_s,
        runs.tokens_per_s_per_chip,
        replica_instances(runs.chips, offers.accelerator_count) as instances_per_replica,
        replicas_per_instance(runs.chips, offers.accelerator_count) as replicas_per_instance,
        runs.source_id as benchmark_source_id,
        runs.data_as_of as benchmark_as_of,
        runs.source_ref as benchmark_ref,
        'own run: ' || coalesce(runs.run_source, runs.source_id) || ', ' || runs.chips || ' x ' || runs.accelerator_id
            || coalesce(', concurrency ' || cast(runs.concurrency as bigint), '')
            || coalesce(', ' || runs.request_rate || ' requests/s offered', '')
            || coalesce(' (' || runs.run_date || ')', '') as benchmark_label,
        false as precision_doubtful,
        runs.success_rate as run_success_rate
    from workloads
    inner join runs on runs.model_id = workloads.model_id
    inner join accepted
        on accepted.workload_id = workloads.workload_id and accepted.precision = runs.precision_class
    inner join offers
        on offers.accelerator_id = runs.accelerator_id
        and (offers.accelerator_count >= runs.chips or runs.chips % offers.accelerator_count = 0)
        and offer_term_accepted(workloads.pricing_terms, offers.pricing_term, offers.term_months, workloads.months)
    where workloads.is_offline
        or (runs.tpot_p99_ms <= coalesce(workloads.slo_tpot_ms, runs.tpot_p99_ms)
            and runs.ttft_p99_ms <= coalesce(workloads.slo_ttft_ms, runs.ttft_p99_ms))
),

final as (
    select
        *,
        case when precision in ('fp16', 'bf16') then 'bf16' else precision end as precision_class,
        'measured' as basis,
        null::integer as batch
    from (select * from matched union all by name select * from own_runs)
    qualify row_number() over (
        partition by workload_id, offer_id, precision_class
        order by replicas_per_instance * replica_tokens_per_s / instances_per_replica desc, benchmark_ref
    ) = 1
)

select * from final
