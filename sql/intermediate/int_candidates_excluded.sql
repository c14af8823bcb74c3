-- Grain: one row per workload x offer x precision (inference) or chip count (training) that cannot run the
-- workload, with the reason, and offers on a pricing term the workload does not buy. Nothing is dropped
-- silently: the reports list these beside the rankings.
with training as (
    select * from intermediate.int_training_estimates_computed where exclusion_reason is not null
),

measured_training as (
    select workload_id, offer_id from intermediate.int_training_measured
),

unmeasured_training as (
    -- MLPerf task workloads without a token count are priced only from measured runs: every other offer is
    -- listed, with why no measured run covers it
    select
        workloads.workload_id,
        offers.*,
        null as precision,
        null::integer as chips,
        case
            when exists (
                select 1 from staging.stg_mlperf_training__results as results
                where results.benchmark = workloads.benchmark_task and results.accelerator_id = offers.accelerator_id
            ) then
                'MLPerf ' || workloads.benchmark_task || ' was measured on ' || offers.accelerator_id
                || ' with more chips a node than ' || offers.instance_type || ' has (' || offers.accelerator_count || ')'
            else
                'no MLPerf ' || workloads.benchmark_task || ' result for ' || offers.accelerator_id
                || ', and the workload declares no token count to estimate from'
        end as exclusion_reason
    from catalog.workloads as workloads
    inner join intermediate.int_offers_priced as offers on offer_term_accepted(workloads.pricing_terms, offers.pricing_term, offers.term_months, workloads.months)
    where workloads.kind = 'training' and workloads.tokens is null
        and not exists (
            select 1 from measured_training
            where measured_training.workload_id = workloads.workload_id
                and measured_training.offer_id = offers.offer_id
        )
),

inference as (
    select * from intermediate.int_inference_estimates_computed where exclusion_reason is not null
),

measured_inference as (
    -- an estimate excluded where a measured result runs it is not an exclusion
    select workload_id, offer_id, precision_class from intermediate.int_inference_measured
),

unused_measurements as (
    -- a measurement that met the scenario or the SLO but not the shape or the replica rules: an excluded estimate on
    -- the same offer says why it is not measured either
    select * from intermediate.int_serving_results_unused
),

terms_not_bought as (
    -- offers on a pricing term the workload does not buy (or a commitment longer than it runs): listed, not ranked
    select
        workloads.workload_id, offers.offer_id, offers.cloud, offers.region, offers.instance_type,
        offers.pricing_term, offers.accelerator_id, offers.accelerator_count,
        null as precision,
        null::integer as chips,
        case
            when not list_contains(workloads.pricing_terms, offers.pricing_term) then
                'the workload does not buy ' || offers.pricing_term || ' capacity (pricing_terms in '
                || 'workloads.yaml: ' || array_to_string(workloads.pricing_terms, ', ') || ')'
            else
                'a ' || offers.term_months || '-month ' || offers.pricing_term || ' term outlasts the workload ('
                || coalesce(cast(workloads.months as varchar) || ' months', 'a training run is paid per run') || ')'
        end as exclusion_reason
    from catalog.workloads as workloads
    cross join intermediate.int_offers_priced as offers
    where not offer_term_accepted(workloads.pricing_terms, offers.pricing_term, offers.term_months, workloads.months)
),

no_energy_figure as (
    -- a workload ranked by energy or emissions cannot rank a candidate whose chip publishes no power, nor (emissions)
    -- one in a region instances.yaml declares no grid intensity for
    select workload_id, offer_id, cloud, region, instance_type, pricing_term, accelerator_id, accelerator_count,
           precision, chips,
           case when has_energy then 'no grid intensity declared for ' || cloud || ' ' || region
                    || ' (instances.yaml grid_intensity): the workload is ranked by emissions'
                else 'no published power for ' || accelerator_id || ': the workload is ranked by ' || objective
           end as exclusion_reason
    from (
        select costs.workload_id, offer_id, cloud, region, instance_type, pricing_term, accelerator_id,
               accelerator_count, null as precision, cast(chips as integer) as chips,
               energy_kwh is not null as has_energy, workloads.objective
        from intermediate.int_training_costs_computed as costs
        inner join catalog.workloads as workloads using (workload_id)
        where past_deadline_reason is null and (
            (workloads.objective = 'energy' and energy_kwh is null)
            or (workloads.objective = 'emissions' and kgco2e is null))
        union all
        select costs.workload_id, offer_id, cloud, region, instance_type, pricing_term, accelerator_id,
               accelerator_count, precision, cast(replica_chips as integer) as chips,
               kwh_per_million_tokens is not null as has_energy, workloads.objective
        from intermediate.int_inference_costs_computed as costs
        inner join catalog.workloads as workloads using (workload_id)
        where outcome_value is null
    )
),

past_deadline as (
    -- a run that misses the deadline once its reclaims' rework is counted (the estimate's own check counts none)
    select workload_id, offer_id, cloud, region, instance_type, pricing_term, accelerator_id, accelerator_count,
           null as precision, cast(chips as integer) as chips, past_deadline_reason as exclusion_reason
    from intermediate.int_training_costs_computed
    where past_deadline_reason is not null
),

final as (
    select workload_id, offer_id, cloud, region, instance_type, pricing_term, accelerator_id, accelerator_count,
           precision, chips, exclusion_reason
    from past_deadline
    union all by name
    select workload_id, offer_id, cloud, region, instance_type, pricing_term, accelerator_id, accelerator_count,
           precision, chips, exclusion_reason
    from no_energy_figure
    union all by name
    select workload_id, offer_id, cloud, region, instance_type, pricing_term, accelerator_id, accelerator_count,
           precision, chips, exclusion_reason
    from terms_not_bought
    union all by name
    select workload_id, offer_id, cloud, region, instance_type, pricing_term, accelerator_id, accelerator_count,
           precision, chips, exclusion_reason
    from training
    anti join measured_training using (workload_id, offer_id)
    union all by name
    select workload_id, offer_id, cloud, region, instance_type, pricing_term, accelerator_id, accelerator_count,
           precision, chips, exclusion_reason
    from unmeasured_training
    union all by name
    select inference.workload_id, inference.offer_id, inference.cloud, inference.region, inference.instance_type,
           inference.pricing_term, inference.accelerator_id, inference.accelerator_count, inference.precision,
           inference.replica_chips as chips,
           inference.exclusion_reason
               || coalesce('; not measured: ' || unused_measurements.unused_reason, '') as exclusion_reason
    from inference
    anti join measured_inference using (workload_id, offer_id, precision_class)
    left join unused_measurements using (workload_id, offer_id, precision_class)
)

select * from final
