-- Grain: one row per training workload x offer x measured chip count. Basis `measured`: an MLPerf Training
-- time-to-train of this accelerator on the workload's task, or the user's own run of the workload (benchmark_runs:
-- workload, chips, time_to_train_minutes), priced on whole instances of the offer (interruptions are priced in
-- int_training_costs_computed). An offer qualifies for an MLPerf result when its instance holds at least the chips per
-- node the result was measured on; for an own run when its instance holds the run's chips or its chip count
-- divides them. At one chip count the user's own run prices the offer (it measured the user's own stack), else the
-- fastest MLPerf result.
with workloads as (
    select * from catalog.workloads where kind = 'training'
),

results as (
    select * from staging.stg_mlperf_training__results
    where time_to_train_minutes > 0
),

runs as (
    select * from staging.stg_benchmark_runs__results
    where kind = 'training' and workload_id is not null and chips > 0 and time_to_train_minutes > 0
),

offers as (
    select * from intermediate.int_offers_priced
),

matched as (
    select
        workloads.workload_id,
        offers.*,
        results.chips,
        results.chips_per_node,
        instances_needed(results.chips, offers.accelerator_count) as instances,
        results.time_to_train_minutes,
        results.time_to_train_minutes / 60 as run_hours,
        results.source_id as benchmark_source_id,
        results.data_as_of as benchmark_as_of,
        results.source_ref as benchmark_ref,
        -- MLPerf summaries declare no precision: the one models.yaml declares the submission trained at on this chip
        -- (staging; as the back-test estimates it), else none, said as not declared
        results.declared_precision as precision,
        'MLPerf Training ' || results.benchmark || ': ' || results.submitter || ' ' || results.system
            || ' (' || format('{:,}', cast(results.chips as integer)) || ' chips)' as benchmark_label
    from workloads
    inner join results
        on results.benchmark = workloads.benchmark_task
        -- the divisions and availabilities the workload declares it accepts
        and list_contains(workloads.benchmark_divisions, lower(results.division))
        and list_contains(workloads.benchmark_availabilities, lower(results.availability))
    inner join offers
        on offers.accelerator_id = results.accelerator_id
        and offers.accelerator_count >= results.chips_per_node
        and offer_term_accepted(workloads.pricing_terms, offers.pricing_term, offers.term_months, workloads.months)
),

own_runs as (
    select
        workloads.workload_id,
        offers.*,
        runs.chips,
        null::double as chips_per_node,
        runs.precision,
        instances_needed(runs.chips, offers.accelerator_count) as instances,
        runs.time_to_train_minutes,
        runs.time_to_train_minutes / 60 as run_hours,
        runs.source_id as benchmark_source_id,
        runs.data_as_of as benchmark_as_of,
        runs.source_ref as benchmark_ref,
        'own run: ' || coalesce(runs.run_source, runs.source_id) || ', ' || runs.chips || ' x ' || runs.accelerator_id
            || ', ' || printf('%.1f', runs.time_to_train_minutes) || ' min'
            || coalesce(', run on ' || runs.run_date, '') as benchmark_label,
        true as is_own_run
    from workloads
    inner join runs on runs.workload_id = workloads.workload_id
    inner join offers
        on offers.accelerator_id = runs.accelerator_id
        and (offers.accelerator_count >= runs.chips or runs.chips % offers.accelerator_count = 0)
        and offer_term_accepted(workloads.pricing_terms, offers.pricing_term, offers.term_months, workloads.months)
),

final as (
    select
        * exclude (is_own_run),
        'measured' as basis,
        null::double as mfu,
        workload_id || '|' || offer_id || '|' || cast(chips as integer) as candidate_id
    from (select * from matched union all by name select * from own_runs)
    qualify row_number() over (
        partition by workload_id, offer_id, chips
        order by coalesce(is_own_run, false) desc, time_to_train_minutes, benchmark_ref
    ) = 1
)

select * from final
