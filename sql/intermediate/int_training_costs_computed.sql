-- Grain: one row per training workload x offer x chip count that can run it: measured candidates (MLPerf task
-- workloads), and for offers no measurement covers, the eligible scaled / estimated candidates of workloads
-- that declare a token count. Measured beats scaled beats estimated on the same offer.
-- Interruptions: on reclaimable capacity with a declared rate for the offer's cloud, the run redoes
-- interruption_rework_share of itself (the job is reclaimed instances x the per-instance rate; each reclaim redoes
-- half a checkpoint interval, or half the run where it is shorter, plus the restart); otherwise the pricing term's
-- flat interruption_overhead, labelled.
-- A deadline is met or missed on the run's wall-clock, its rework included: a run past it is kept here with
-- past_deadline_reason, for excluded_candidates, and ranked nowhere.
-- Energy of a completed run (rework included): an on-prem system's declared site power x its PUE, priced at its
-- USD/kWh; else the chips' TDP x the family's PUE; else none, and energy_label says the TDP is not published.
with measured as (
    select * from intermediate.int_training_measured
),

estimates as (
    select * from intermediate.int_training_estimates_computed
    where exclusion_reason is null
),

candidates as (
    select * exclude (chips_per_node, site_power_kw, usd_per_kwh, site_pue) from measured
    union all by name
    select * exclude (exclusion_reason, scaling, state_chips, comm_modelled, step_comm_s)
    from estimates
    anti join measured using (workload_id, offer_id)
),

interrupted as (
    select
        candidates.*,
        workloads.checkpoint_interval_hours,
        workloads.deadline_hours,
        rates.per_instance_month,
        rates.restart_hours,
        rates.source as rate_source,
        coalesce(
            interruption_rework_share(candidates.instances, rates.per_instance_month,
                                      workloads.checkpoint_interval_hours, rates.restart_hours, candidates.run_hours),
            terms.interruption_overhead,
            0) as interruption_overhead
    from candidates
    inner join catalog.workloads as workloads using (workload_id)
    left join catalog.pricing_terms as terms on terms.pricing_term = candidates.pricing_term
    left join catalog.interruption_rates as rates
        on rates.pricing_term = candidates.pricing_term and rates.cloud = candidates.cloud
),

energised as (
    select
        interrupted.*,
        (case when sites.site_power_kw is not null
              then interrupted.run_hours * interrupted.instances * sites.site_power_kw * sites.site_pue
              else energy_kwh(interrupted.run_hours, interrupted.chips, accelerators.tdp_w, defaults.pue) end)
            * (1 + interrupted.interruption_overhead) as energy_kwh,
        sites.site_power_kw * sites.site_pue * sites.usd_per_kwh * interrupted.run_hours * interrupted.instances
            * (1 + interrupted.interruption_overhead) as energy_usd,
        case
            when sites.site_power_kw is not null then
                'declared site power: ' || printf('%g', sites.site_power_kw) || ' kW an instance x PUE '
                || printf('%g', sites.site_pue) || ' at ' || printf('%g', sites.usd_per_kwh) || ' USD/kWh'
            when accelerators.tdp_w is not null then
                'TDP ' || declared_text(accelerators.tdp_w) || ' W x '
                || chips_text(interrupted.chips, accelerators.family) || ' x PUE '
                || printf('%g', defaults.pue)
            else 'no published TDP for ' || interrupted.accelerator_id || ': no energy figure'
        end as energy_label,
        grid.gco2e_per_kwh,
        accelerators.family  -- for the reasons' words (a CPU's chips are sockets), not kept
    from interrupted
    left join catalog.grid_intensity as grid on grid.cloud = interrupted.cloud and grid.region = interrupted.region
    inner join intermediate.int_offers_priced as sites using (offer_id)
    inner join catalog.accelerators as accelerators on accelerators.accelerator_id = interrupted.accelerator_id
    inner join catalog.family_defaults as defaults on defaults.family = accelerators.family
),

final as (
    select
        * exclude (checkpoint_interval_hours, per_instance_month, restart_hours, rate_source, gco2e_per_kwh,
                   deadline_hours, family),
        case when run_hours * (1 + interruption_overhead) > deadline_hours then
            -- written as the estimates' reason writes them (int_training_estimates_computed)
            'needs ' || hours_needed_text(run_hours * (1 + interruption_overhead), deadline_hours) || ' h on '
            || chips_text(chips, family) || ', '
            || printf('%.2f', interruption_overhead * 100) || '% of it redone after reclaims; the deadline is '
            || deadline_text(deadline_hours) || ' h'
        end as past_deadline_reason,
        completed_run_usd_with_overhead(run_hours, instances, usd_per_hour, interruption_overhead)
            as completed_run_usd,
        -- emissions: the run's energy x the region's grid intensity (instances.yaml grid_intensity)
        energy_kwh * gco2e_per_kwh / 1000 as kgco2e,
        -- reclaims expected over the run (modelled rate only)
        instances * per_instance_month / 730 * run_hours as expected_interruptions,
        case
            when per_instance_month is not null then
                'modelled: ' || per_instance_month || ' reclaims per instance-month (' || rate_source || ') x '
                || instances
                || ' instances, checkpoint every ' || printf('%g', checkpoint_interval_hours) || ' h, restart '
                || printf('%g', restart_hours) || ' h: ' || printf('%.2f', interruption_overhead * 100)
                || '% redone'
            when interruption_overhead > 0 then
                'flat ' || printf('%g', interruption_overhead * 100) || '% redone (declared fallback: no rate for '
                || cloud || ' ' || pricing_term || ')'
            else 'not reclaimable'
        end as interruption_basis
    from energised
)

select * from final
