-- Grain: one row per MLPerf-task training workload x offer x measured chip count. Basis `measured`: an MLPerf
-- Training time-to-train of this accelerator on this task, priced on whole instances of the offer, plus the
-- pricing term's interruption overhead. An offer qualifies when its instance holds at least the chips per node
-- the result was measured on.
with workloads as (
    select * from catalog.workloads where kind = 'training'
),

results as (
    select * from staging.stg_mlperf_training__results
    where time_to_train_minutes > 0
),

offers as (
    select * from intermediate.int_offers_priced
),

terms as (
    select * from catalog.pricing_terms
),

accelerators as (
    select * from catalog.accelerators
),

defaults as (
    select * from catalog.family_defaults
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
        coalesce(terms.interruption_overhead, 0) as interruption_overhead,
        completed_run_usd_with_overhead(
            results.time_to_train_minutes / 60,
            instances_needed(results.chips, offers.accelerator_count),
            offers.usd_per_hour,
            coalesce(terms.interruption_overhead, 0)
        ) as completed_run_usd,
        energy_kwh(results.time_to_train_minutes / 60, results.chips, accelerators.tdp_w, defaults.pue) as energy_kwh,
        results.source_id as benchmark_source_id,
        results.data_as_of as benchmark_as_of,
        results.source_ref as benchmark_ref,
        'MLPerf Training ' || results.benchmark || ': ' || results.submitter || ' ' || results.system
            || ' (' || cast(results.chips as integer) || ' chips)' as benchmark_label
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
    inner join accelerators on accelerators.accelerator_id = offers.accelerator_id
    inner join defaults on defaults.family = accelerators.family
    left join terms on terms.pricing_term = offers.pricing_term
),

final as (
    select
        *,
        'measured' as basis,
        null::double as mfu,
        workload_id || '|' || offer_id || '|' || cast(chips as integer) as candidate_id
    from matched
    qualify row_number() over (
        partition by workload_id, offer_id, chips
        order by time_to_train_minutes, benchmark_ref
    ) = 1
)

select * from final
