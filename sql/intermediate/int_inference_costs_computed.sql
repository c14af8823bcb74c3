-- Grain: one row per inference workload x offer x precision class that can serve it, with the best basis
-- (measured beats estimated). A deployment unit is one instance holding whole replicas, or the instances one
-- replica spans. Services are sized in whole units for their peak traffic, so utilization = mean load /
-- provisioned capacity and the idle rest is paid for; offline work is priced at full utilization. The success
-- rate is the measured one where an own run gives it, else the workload's.
-- Energy per million output tokens at full load: an on-prem system's declared site power x its PUE; else measured
-- (an MLPerf power result of this chip, model, scenario and precision class: the system's watts over its tokens/s,
-- x the family's PUE); else the chips' TDP x the family's serving_load_factor x PUE (labelled); else none, and the
-- row says which figure is missing. Perf per watt is output tokens/s per watt drawn (before PUE). That energy counts
-- the work alone; a service's provisioned_kwh_per_month is its instances drawing the same power all month, idle or not.
-- Reclaimable capacity (a pricing term with a declared interruption rate for the offer's cloud): a service carries
-- one spare deployment unit, so that a reclaim leaves the peak's capacity standing; offline work loses the restart
-- time of each reclaim of a unit's instances (instances_per_replica x reclaims per instance-month / 730 x
-- restart_hours of every hour).
with measured as (
    select * from intermediate.int_inference_measured
),

estimates as (
    select * from intermediate.int_inference_estimates_computed
    where exclusion_reason is null
),

workloads as (
    select * from catalog.workloads where kind = 'inference'
),

training as (
    -- the cheapest completed run of each training workload, for the lifetime cost
    select workload_id as trained_by, min(completed_run_usd) as training_usd
    from intermediate.int_training_costs_computed
    where past_deadline_reason is null
    group by workload_id
),

candidates as (
    -- the offer's site energy figures are joined once, for both bases, below
    select * exclude (precision_class, site_power_kw, usd_per_kwh, site_pue), precision_class from measured
    union all by name
    -- an estimate reads no benchmark precision to doubt
    select * exclude (exclusion_reason, exclusion_kind, weights_gb, kv_bytes_per_token, tpot_ms, memory_gb_per_chip,
                      one_sequence_gb, fastest_tpot_ms, fastest_prefill_ms), false as precision_doubtful
    from estimates
),

unused as (
    -- a measurement that met the scenario or the SLO but not the shape or the replica rules: the fallback says why
    select * from intermediate.int_serving_results_unused
),

best as (
    select *
    from candidates
    qualify row_number() over (
        partition by workload_id, offer_id, precision_class
        order by case basis when 'measured' then 1 when 'scaled' then 2 else 3 end
    ) = 1
),

labelled as (
    select
        best.* replace (
            case when best.basis <> 'measured' and unused.unused_reason is not null
                 then best.benchmark_label || '; not measured: ' || unused.unused_reason
                 else best.benchmark_label end as benchmark_label
        )
    from best
    left join unused using (workload_id, offer_id, precision_class)
),

units as (
    select
        best.*,
        workloads.input_tokens,
        workloads.output_tokens,
        workloads.is_offline,
        workloads.mean_requests_per_s,
        workloads.peak_factor,
        coalesce(best.run_success_rate, workloads.success_rate) as success_rate,
        workloads.months,
        workloads.trained_by,
        workloads.model_id,
        workloads.objective,
        best.instances_per_replica * best.usd_per_hour as deployment_usd_per_hour,
        best.replicas_per_instance * best.replica_tokens_per_s as deployment_tokens_per_s,
        best.replicas_per_instance * best.replica_tokens_per_s / workloads.output_tokens
            as deployment_requests_per_s,
        nullif(rates.per_instance_month, 0) as reclaims_per_instance_month,
        rates.restart_hours as reclaim_restart_hours,
        -- offline: the share of a deployment unit's hours lost restarting after reclaims
        offline_reclaim_loss(workloads.is_offline, best.instances_per_replica, rates.per_instance_month,
                             rates.restart_hours) as reclaim_loss
    from labelled as best
    inner join workloads using (workload_id)
    left join catalog.interruption_rates as rates
        on rates.pricing_term = best.pricing_term and rates.cloud = best.cloud
),

sized as (
    select
        *,
        -- an hour of a deployment unit pays for what it produces in the hours it is not restarting (offline reclaims)
        usd_per_million_tokens(deployment_usd_per_hour, deployment_tokens_per_s) / (1 - coalesce(reclaim_loss, 0))
            as usd_per_million_tokens,
        -- the same money over input + output tokens, as some public serving benchmarks count them
        usd_per_million_tokens(deployment_usd_per_hour, deployment_tokens_per_s) / (1 - coalesce(reclaim_loss, 0))
            * output_tokens / (input_tokens + output_tokens) as usd_per_million_total_tokens,
        -- where the estimate separates prefill from decode (null when measured): the deployment's hour split by the
        -- share of its time on each, per million input tokens prefilled and per million output tokens decoded
        deployment_usd_per_hour * prefill_share / (deployment_requests_per_s * input_tokens * 3600) * 1e6
            / (1 - coalesce(reclaim_loss, 0)) as usd_per_million_input_tokens,
        usd_per_million_tokens(deployment_usd_per_hour, deployment_tokens_per_s) / (1 - coalesce(reclaim_loss, 0))
            * (1 - prefill_share) as usd_per_million_output_tokens,
        case when not is_offline then
            instances_for_peak(mean_requests_per_s, peak_factor, deployment_requests_per_s)
            + case when reclaims_per_instance_month is not null then 1 else 0 end
        end as deployments,
        case when not is_offline and reclaims_per_instance_month is not null then 1 end as spare_deployments,
        case
            when reclaims_per_instance_month is null then null
            when is_offline then
                'reclaims: ' || reclaims_per_instance_month || ' per instance-month x ' || instances_per_replica
                || ' instance' || case when instances_per_replica > 1 then 's' else '' end || ' a unit, '
                || printf('%g', reclaim_restart_hours) || ' h restart each: ' || printf('%.4f', reclaim_loss * 100)
                || '% of the hours lost'
            else 'reclaimable: one spare deployment unit keeps the peak''s capacity through a reclaim'
        end as interruption_basis
    from units
),

costed as (
    select
        sized.*,
        deployments * instances_per_replica as instances,
        utilization(mean_requests_per_s, deployments, deployment_requests_per_s) as utilization,
        monthly_usd(deployments * instances_per_replica, usd_per_hour) as monthly_usd,
        usd_per_million_successful_requests(
            monthly_usd(deployments * instances_per_replica, usd_per_hour), mean_requests_per_s, success_rate
        ) as usd_per_million_successful_requests,
        training.training_usd
    from sized
    left join training using (trained_by)
),

powered as (
    -- watts drawn per output token/s, from the first figure there is (see the header)
    select
        costed.*,
        sites.site_power_kw,
        sites.usd_per_kwh,
        sites.site_pue,
        case
            when sites.site_power_kw is not null then 'site'
            when power.joules_per_token is not null then 'measured'
            when accelerators.tdp_w is not null then 'tdp'
        end as energy_basis,
        case
            when sites.site_power_kw is not null then
                costed.instances_per_replica * sites.site_power_kw * 1000 / costed.deployment_tokens_per_s
            when power.joules_per_token is not null then power.joules_per_token
            else costed.replica_chips * accelerators.tdp_w * defaults.serving_load_factor
                / costed.replica_tokens_per_s
        end as joules_per_token,
        coalesce(sites.site_pue, defaults.pue) as energy_pue,
        -- kW an instance draws at that same power: the site's declared figure; else the measured joules a token at the
        -- instance's own throughput (the power result's system may be another, power-capped one: its watts alone
        -- would not match the joules the work figure counts); else TDP x the load factor x the instance's chips
        case
            when sites.site_power_kw is not null then sites.site_power_kw
            when power.joules_per_token is not null then
                power.joules_per_token * costed.deployment_tokens_per_s / costed.instances_per_replica / 1000
            else costed.accelerator_count * accelerators.tdp_w * defaults.serving_load_factor / 1000
        end as instance_power_kw,
        accelerators.tdp_w,
        accelerators.family as chip_family,  -- the energy label's word for its chips (a CPU's are sockets)
        defaults.serving_load_factor,
        power.power_label,
        power.power_source_id,
        power.power_as_of,
        power.power_ref,
        grid.gco2e_per_kwh
    from costed
    inner join intermediate.int_offers_priced as sites using (offer_id)
    inner join catalog.accelerators as accelerators on accelerators.accelerator_id = costed.accelerator_id
    inner join catalog.family_defaults as defaults on defaults.family = accelerators.family
    left join catalog.grid_intensity as grid on grid.cloud = costed.cloud and grid.region = costed.region
    left join intermediate.int_serving_power_measured as power
        on power.accelerator_id = costed.accelerator_id
        and power.model_id = costed.model_id
        and power.precision_class = costed.precision_class
        and power.scenario = case when costed.is_offline then 'Offline' else 'Server' end
),

energised as (
    select
        * exclude (tdp_w, serving_load_factor, power_label, chip_family),
        -- J a token x 1e6 tokens / 3.6e6 J a kWh x PUE
        joules_per_token * 1e6 / 3.6e6 * energy_pue as kwh_per_million_tokens,
        1 / joules_per_token as tokens_per_s_per_watt,
        case energy_basis
            when 'site' then 'declared site power: ' || printf('%g', site_power_kw) || ' kW an instance x PUE '
                || printf('%g', energy_pue) || ' at ' || printf('%g', usd_per_kwh) || ' USD/kWh'
            when 'measured' then power_label || ', x PUE ' || printf('%g', energy_pue)
            when 'tdp' then 'TDP ' || declared_text(tdp_w) || ' W x ' || printf('%g', serving_load_factor)
                || ' load (declared) x ' || chips_text(replica_chips, chip_family) || ' x PUE ' || printf('%g', energy_pue)
            else 'no published power for ' || accelerator_id || ': no energy figure'
        end as energy_label
    from powered
),

per_outcome as (
    select
        *,
        -- the energy of the work a service's successful requests take (idle capacity not counted)
        kwh_per_million_tokens * output_tokens / success_rate as kwh_per_million_successful_requests,
        -- emissions: that energy x the region's grid intensity (instances.yaml grid_intensity), kg CO2e
        kwh_per_million_tokens * gco2e_per_kwh / 1000 as kgco2e_per_million_tokens,
        kwh_per_million_tokens * output_tokens / success_rate * gco2e_per_kwh / 1000
            as kgco2e_per_million_successful_requests,
        kwh_per_million_tokens * usd_per_kwh as energy_usd_per_million_tokens,
        -- a service's provisioned instances drawing that power all month, idle or not (idle capacity counted at the
        -- load power: no idle figure is declared), beside its monthly_usd, which pays for them all; the work's share
        -- of it is the utilization
        case when not is_offline then instances * instance_power_kw * energy_pue * 730 end as provisioned_kwh_per_month
    from energised
),

final as (
    select
        * exclude (input_tokens, output_tokens, is_offline, mean_requests_per_s, peak_factor, success_rate, months,
                   trained_by, model_id, site_power_kw, usd_per_kwh, site_pue, joules_per_token, energy_pue,
                   reclaims_per_instance_month, reclaim_restart_hours, objective, gco2e_per_kwh,
                   instance_power_kw),
        success_rate,
        -- a training workload named (trained_by) that no offer can run has no cost to add: no lifetime figure, not
        -- a serving-only one that would pass for the whole
        case when monthly_usd is not null and (trained_by is null or training_usd is not null)
             then lifetime_usd(training_usd, months, monthly_usd) end as lifetime_usd,
        case when monthly_usd is not null and (trained_by is null or training_usd is not null)
             then inference_share(training_usd, months, monthly_usd) end as inference_share,
        case
            when objective = 'energy' and is_offline then 'kwh_per_million_tokens'
            when objective = 'energy' then 'kwh_per_million_successful_requests'
            when objective = 'emissions' and is_offline then 'kgco2e_per_million_tokens'
            when objective = 'emissions' then 'kgco2e_per_million_successful_requests'
            when is_offline then 'usd_per_million_tokens'
            else 'usd_per_million_successful_requests'
        end as outcome_metric,
        -- null under the energy or emissions objective where the chip publishes no power or the region declares no
        -- grid intensity: not ranked (excluded, with the reason)
        case
            when objective = 'energy' and is_offline then kwh_per_million_tokens
            when objective = 'energy' then kwh_per_million_successful_requests
            when objective = 'emissions' and is_offline then kgco2e_per_million_tokens
            when objective = 'emissions' then kgco2e_per_million_successful_requests
            when is_offline then usd_per_million_tokens
            else usd_per_million_successful_requests
        end as outcome_value,
        workload_id || '|' || offer_id || '|' || precision_class as candidate_id
    from per_outcome
)

select * from final
