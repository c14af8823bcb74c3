-- Grain: one row per inference workload x offer x measured serving point that could run it: every MLPerf Inference
-- result of the workload's task (every scenario: Offline, Server, Interactive) at an accuracy target at least the
-- workload's, in a division, suite and availability it accepts and at a precision it accepts, and every concurrency
-- level (or offered request rate) of the user's own runs of its model (an `offline` run, throughput only, for offline
-- workloads alone). A replica is the measured system's chips, under the estimate's rules: its group tiles the
-- instance (divides its chips) or spans whole instances, at most the workload's max_instances_per_replica
-- (`replica_fits`). The measured request shape (an MLPerf task's, declared in catalogs/models.yaml; an own run's)
-- must be within the workload's shape_tolerance of its input and output lengths (`shape_matches`). `is_candidate`
-- says which points may price the workload (int_inference_measured keeps the best): shape and replica fit, and an
-- MLPerf result of the workload's own scenario, or an own-run level whose p99 TTFT and TPOT meet the workload's SLO
-- (any level for offline work); `unused_reason` says why a point that met the scenario or the SLO does not. Per point, the output tokens/s
-- one user sees (int_serving_load_points draws them): an own run's 1000 / median TPOT (else throughput /
-- concurrency); an MLPerf scenario's 1000 / its p99 TPOT bound, a floor (Offline has none: null). A result whose
-- declared precision the staging cross-check doubts says so in its label and `precision_doubtful`.
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
    where kind in ('serving', 'offline') and output_tokens_per_s > 0
),

mlperf as (
    select
        workloads.workload_id,
        offers.*,
        false as is_own_run,
        null::varchar as run_kind,
        results.scenario_normalised = workloads.benchmark_scenario as is_scenario_or_slo_met,
        scenarios.input_tokens as measured_input_tokens,
        scenarios.output_tokens as measured_output_tokens,
        results.precision,
        -- a replica is one node of the measured system (a multi-node system serves from several), with its share of
        -- the system's throughput
        cast(results.accelerators_per_node as integer) as replica_chips,
        results.performance_result * results.accelerators_per_node / results.accelerators_total
            as replica_tokens_per_s,
        results.performance_result / results.accelerators_total as tokens_per_s_per_chip,
        replica_instances(results.accelerators_per_node, offers.accelerator_count) as instances_per_replica,
        replicas_per_instance(results.accelerators_per_node, offers.accelerator_count) as replicas_per_instance,
        'MLPerf ' || results.version || ' ' || results.scenario_normalised as load_point,
        1000 / nullif(scenarios.tpot_ms, 0) as tokens_per_s_per_user,
        case when scenarios.tpot_ms > 0 then 'scenario p99 TPOT bound (a floor)' end as tokens_per_s_per_user_basis,
        scenarios.tpot_ms as tpot_p99_ms,
        scenarios.ttft_ms as ttft_p99_ms,
        -- the scenario's bounds within the workload's; Offline has none, so it shows no latency a service can rely on
        workloads.is_offline or coalesce(
            scenarios.tpot_ms <= coalesce(workloads.slo_tpot_ms, scenarios.tpot_ms)
            and scenarios.ttft_ms <= coalesce(workloads.slo_ttft_ms, scenarios.ttft_ms), false
        ) as meets_slo,
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
        and results.accuracy_target_pct >= workloads.accuracy_target_pct
        -- the divisions, suites and availabilities the workload declares it accepts
        and list_contains(workloads.benchmark_divisions, lower(results.division))
        and list_contains(workloads.benchmark_suites, lower(results.suite))
        and list_contains(workloads.benchmark_availabilities, lower(results.availability))
    left join scenarios
        on scenarios.task = results.task and scenarios.scenario = results.scenario_normalised
    inner join accepted
        on accepted.workload_id = workloads.workload_id
        and precision_class(accepted.precision) = precision_class(results.precision)
    inner join offers
        on offers.accelerator_id = results.accelerator_id
        and offer_term_accepted(workloads.pricing_terms, offers.pricing_term, offers.term_months, workloads.months)
    where results.accelerators_per_node > 0
),

own_runs as (
    select
        workloads.workload_id,
        offers.*,
        workloads.is_offline or coalesce(
            runs.tpot_p99_ms <= coalesce(workloads.slo_tpot_ms, runs.tpot_p99_ms)
            and runs.ttft_p99_ms <= coalesce(workloads.slo_ttft_ms, runs.ttft_p99_ms), false
        ) as meets_slo,
        -- an own-run level may price the workload when it meets the SLO (any level for offline work)
        meets_slo as is_scenario_or_slo_met,
        true as is_own_run,
        runs.kind as run_kind,
        runs.input_tokens as measured_input_tokens,
        runs.output_tokens as measured_output_tokens,
        runs.precision,
        runs.chips as replica_chips,
        runs.output_tokens_per_s as replica_tokens_per_s,
        runs.tokens_per_s_per_chip,
        replica_instances(runs.chips, offers.accelerator_count) as instances_per_replica,
        replicas_per_instance(runs.chips, offers.accelerator_count) as replicas_per_instance,
        coalesce('concurrency ' || cast(runs.concurrency as bigint), runs.request_rate || ' requests/s offered',
                 'own run ' || runs.source_ref) as load_point,
        coalesce(1000 / nullif(runs.tpot_p50_ms, 0), runs.output_tokens_per_s / nullif(runs.concurrency, 0))
            as tokens_per_s_per_user,
        case
            when runs.tpot_p50_ms > 0 then 'median TPOT'
            when runs.concurrency > 0 then 'throughput / concurrency'
        end as tokens_per_s_per_user_basis,
        runs.tpot_p99_ms,
        runs.ttft_p99_ms,
        runs.source_id as benchmark_source_id,
        runs.data_as_of as benchmark_as_of,
        runs.source_ref as benchmark_ref,
        'own run: ' || coalesce(runs.run_source, runs.source_id) || ', ' || runs.chips || ' x ' || runs.accelerator_id
            || coalesce(', ' || format('{:,}', cast(runs.input_tokens as bigint)) || ' + '
                        || format('{:,}', cast(runs.output_tokens as bigint)) || ' tokens', '')
            || coalesce(', concurrency ' || cast(runs.concurrency as bigint), '')
            || coalesce(', ' || runs.request_rate || ' requests/s offered', '')
            || coalesce(', run on ' || runs.run_date, '') as benchmark_label,
        false as precision_doubtful,
        runs.success_rate as run_success_rate
    from workloads
    inner join runs on runs.model_id = workloads.model_id
    inner join accepted
        on accepted.workload_id = workloads.workload_id and precision_class(accepted.precision) = runs.precision_class
    inner join offers
        on offers.accelerator_id = runs.accelerator_id
        and offer_term_accepted(workloads.pricing_terms, offers.pricing_term, offers.term_months, workloads.months)
),

fitted as (
    select
        points.*,
        precision_class(points.precision) as precision_class,
        workloads.input_tokens,
        workloads.output_tokens,
        workloads.shape_tolerance,
        workloads.max_instances_per_replica,
        workloads.is_offline,
        shape_gap(points.measured_input_tokens, points.measured_output_tokens, workloads.input_tokens,
                  workloads.output_tokens) as shape_gap,
        coalesce(shape_gap(points.measured_input_tokens, points.measured_output_tokens, workloads.input_tokens,
                           workloads.output_tokens) <= workloads.shape_tolerance, false) as shape_matches,
        tiles_instances(points.replica_chips, points.accelerator_count)
            and points.instances_per_replica <= workloads.max_instances_per_replica as replica_fits
    from (select * from mlperf union all by name select * from own_runs) as points
    inner join workloads using (workload_id)
),

final as (
    select
        * exclude (input_tokens, output_tokens, shape_tolerance, max_instances_per_replica),
        is_scenario_or_slo_met and shape_matches and replica_fits as is_candidate,
        case
            -- a throughput-only run shows no latency: it prices offline work only
            when run_kind = 'offline' and not is_offline then
                benchmark_label || ' is a throughput-only (offline) run: it shows no latency for this workload''s '
                || 'objective'
            when not is_scenario_or_slo_met then null
            when measured_input_tokens is null or measured_output_tokens is null then
                benchmark_label || ' gives no request shape (input and output tokens)'
            when not shape_matches then
                -- an own run's label gives its shape; an MLPerf result's is its task's
                benchmark_label
                || case when is_own_run then ': ' else ' ran its task''s '
                        || format('{:,}', cast(measured_input_tokens as bigint)) || ' + '
                        || format('{:,}', cast(measured_output_tokens as bigint)) || ' tokens, ' end
                || 'outside ' || cast(round(shape_tolerance * 100) as bigint) || '% of this workload''s '
                || format('{:,}', input_tokens) || ' + ' || format('{:,}', output_tokens) || ' tokens'
            when not replica_fits then
                benchmark_label || ': a replica of ' || format('{:,}', replica_chips) || ' chips '
                || case when not tiles_instances(replica_chips, accelerator_count)
                        then 'does not tile the ' || format('{:,}', accelerator_count) || ' of ' || instance_type
                        else 'spans ' || format('{:,}', instances_per_replica) || ' instances of ' || instance_type
                            || '; the workload allows ' || format('{:,}', max_instances_per_replica) end
        end as unused_reason
    from fitted
)

select * from final
