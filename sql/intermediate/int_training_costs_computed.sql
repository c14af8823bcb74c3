-- Grain: one row per training workload x offer x measured chip count. Basis `measured`: an MLPerf Training
-- time-to-train of this accelerator on this task, priced on whole instances of the offer. An offer qualifies
-- when its instance holds at least the chips per node the result was measured on.
with workloads as (
    select * from catalog.workloads where kind = 'training'
),

results as (
    select * from staging.stg_mlperf_training__results
    where division = 'closed' and time_to_train_minutes > 0
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
        completed_run_usd(
            results.time_to_train_minutes,
            instances_needed(results.chips, offers.accelerator_count),
            offers.usd_per_hour
        ) as completed_run_usd,
        results.source_id as benchmark_source_id,
        results.data_as_of as benchmark_as_of,
        results.source_ref as benchmark_ref,
        'MLPerf Training ' || results.benchmark || ': ' || results.submitter || ' ' || results.system
            || ' (' || cast(results.chips as integer) || ' chips)' as benchmark_label
    from workloads
    inner join results on results.benchmark = workloads.benchmark_task
    inner join offers
        on offers.accelerator_id = results.accelerator_id
        and offers.accelerator_count >= results.chips_per_node
),

final as (
    select
        *,
        'measured' as basis,
        workload_id || '|' || offer_id || '|' || cast(chips as integer) as candidate_id
    from matched
    qualify row_number() over (
        partition by workload_id, offer_id, chips
        order by time_to_train_minutes, benchmark_ref
    ) = 1
)

select * from final
