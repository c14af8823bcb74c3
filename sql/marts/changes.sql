-- marts.changes — grain: one row per run x change_kind x subject: everything that differs from the run it is
-- compared with (the latest committed run with an earlier as-of date; none for the first run): offers added and
-- removed, prices that moved by more than catalog.settings.price_move_threshold (per offer and term), benchmark
-- results new and withdrawn, sources that turned stale or fresh, a catalog edit, and per workload whether its best
-- offer changed, with the reason and the money per outcome.
with runs as (
    select * from intermediate.int_runs_compared
),

sources as (
    select * from intermediate.int_source_loads_compared
),

prices as (
    -- an offer in words, as the reports name it
    select
        *,
        cloud || ' ' || instance_type || ' ' || region || ' ' || pricing_term
            || coalesce(' (' || term_detail || ')', '') as label
    from marts.price_history
),

prices_now as (
    select * from prices where as_of = (select as_of from runs)
),

prices_before as (
    select * from prices where as_of = (select previous_as_of from runs)
),

ranks as (
    -- a candidate in words: its offer and its precision (inference; training at a model and tokens, or an MLPerf
    -- result models.yaml declares the training precision of)
    select
        *,
        cloud || ' ' || instance_type || ' ' || region || ' ' || pricing_term || coalesce(' ' || precision, '')
            as label
    from marts.rank_history
),

ranks_now as (
    select * from ranks where as_of = (select as_of from runs)
),

ranks_before as (
    select * from ranks where as_of = (select previous_as_of from runs)
),

results_now as (
    select * from marts.benchmark_results where as_of = (select as_of from runs)
),

results_before as (
    select * from marts.benchmark_results where as_of = (select previous_as_of from runs)
),

compared as (
    -- nothing is compared on the first run, nor with a run built before these history marts existed
    select * from runs
    where previous_as_of is not null
        and (exists (select 1 from prices_before) or exists (select 1 from ranks_before))
),

offers_added as (
    select
        'offer_added' as change_kind, now.offer_id as subject, now.offer_id,
        now.label,
        null::double as before_value, now.usd_per_hour as after_value, 'usd_per_hour' as unit
    from prices_now as now
    anti join prices_before as before using (offer_id)
),

offers_removed as (
    select
        'offer_removed' as change_kind, before.offer_id as subject, before.offer_id,
        before.label,
        before.usd_per_hour as before_value, null::double as after_value, 'usd_per_hour' as unit
    from prices_before as before
    anti join prices_now as now using (offer_id)
),

prices_moved as (
    select
        'price_moved' as change_kind, now.offer_id as subject, now.offer_id,
        now.label,
        before.usd_per_hour as before_value, now.usd_per_hour as after_value, 'usd_per_hour' as unit
    from prices_now as now
    inner join prices_before as before using (offer_id)
    where before.usd_per_hour > 0
        and abs(now.usd_per_hour / before.usd_per_hour - 1) > (select price_move_threshold from runs)
),

results_added as (
    select
        'benchmark_added' as change_kind, now.result_key as subject, null as offer_id,
        now.result_label || ' (' || now.source_ref || ')' as label,
        null::double as before_value, null::double as after_value, null as unit
    from results_now as now
    anti join results_before as before using (result_key)
),

results_added_from as (
    -- the result added of each source and reference (the first key, if several), with the source and the reference
    -- its key and label were made of: a pick's new evidence is matched on these columns, not read back out of the
    -- key's and the label's text
    select added.subject, added.label, now.source_id, now.source_ref
    from results_added as added
    inner join results_now as now on now.result_key = added.subject
    qualify row_number() over (partition by now.source_id, now.source_ref order by added.subject) = 1
),

results_withdrawn as (
    select
        'benchmark_withdrawn' as change_kind, before.result_key as subject, null as offer_id,
        before.result_label || ' (' || before.source_ref || ')' as label,
        null::double as before_value, null::double as after_value, null as unit
    from results_before as before
    anti join results_now as now using (result_key)
),

sources_changed as (
    select
        case when status = 'stale' then 'source_stale' else 'source_fresh' end as change_kind,
        source_id as subject, null as offer_id,
        source_id || case when status = 'stale'
            then ' is stale (' || coalesce(error, 'no reason recorded') || ')'
                || coalesce('; using its last good load, by the run of ' || stale_since, '; no earlier data')
            else ' is fresh again' end as label,
        null::double as before_value, null::double as after_value, null as unit
    from sources
    where (status = 'stale' and coalesce(previous_status, 'landed') <> 'stale')
        or (status = 'landed' and previous_status = 'stale')
),

catalog_changed as (
    select
        'catalog_changed' as change_kind, 'catalog' as subject, null as offer_id,
        'the catalogs (accelerators, instances, models, workloads, pricing terms) changed' as label,
        null::double as before_value, null::double as after_value, null as unit
    from runs
    where previous_catalog_digest is not null and previous_catalog_digest <> catalog_digest
),

picks as (
    select
        coalesce(now.workload_id, before.workload_id) as workload_id,
        now.candidate_id, now.offer_id, now.outcome_metric, now.outcome_value, now.basis, now.benchmark_ref,
        now.benchmark_label,
        now.price_source_id, now.benchmark_source_id, now.label,
        before.candidate_id as previous_candidate_id, before.offer_id as previous_offer_id,
        before.outcome_metric as previous_outcome_metric, before.outcome_value as previous_outcome_value,
        before.price_source_id as previous_price_source_id, before.benchmark_source_id as previous_benchmark_source_id,
        before.label as previous_label
    from (select * from ranks_now where is_pick) as now
    full outer join (select * from ranks_before where is_pick) as before using (workload_id)
    where now.candidate_id is distinct from before.candidate_id
),

explained as (
    select
        picks.*,
        previous_now.outcome_value as previous_pick_now_value,
        previous_now.basis as previous_pick_now_basis,
        pick_before.basis as pick_previous_basis,
        -- the pick's figure rests on another kind of evidence than in the previous run (a result that now calibrates
        -- it, one that no longer does, another source's measurement): its basis or benchmark source moved. An
        -- estimate's source is the catalog's (a family default, a workload's declared MFU): it moves with an edit
        (pick_before.basis is distinct from picks.basis
         or (picks.basis <> 'estimated'
             and pick_before.benchmark_source_id is distinct from picks.benchmark_source_id)) as pick_basis_moved,
        -- ...or only its label reads otherwise: a result re-measured in place (its row's figures), a factor fitted
        -- anew; but also a catalog edit that moves a figure the label quotes (a peak, a family default), or a release
        -- that words labels otherwise: a label that moved on a night whose catalogs or models changed is told as
        -- that. A source that turned stale reads its last good rows, which moves no label. The
        -- reference is not compared: it names the file by its path and the row by its position (the catalogs read
        -- from another folder, a row inserted above it), and it lists at most five of a factor's results
        pick_before.benchmark_label is distinct from picks.benchmark_label as pick_label_moved,
        (select any_value(label) from offers_added where offer_id = picks.offer_id) as pick_offer_added,
        (select any_value(label) from offers_removed where offer_id = picks.previous_offer_id) as previous_offer_removed,
        (select any_value(after_value / before_value) from prices_moved
         where offer_id = picks.previous_offer_id and after_value > before_value) as previous_price_ratio,
        (select any_value(before_value) from prices_moved where offer_id = picks.previous_offer_id) as previous_price_before,
        (select any_value(after_value) from prices_moved where offer_id = picks.previous_offer_id) as previous_price_after,
        (select any_value(after_value / before_value) from prices_moved
         where offer_id = picks.offer_id and after_value < before_value) as pick_price_ratio,
        (select any_value(before_value) from prices_moved where offer_id = picks.offer_id) as pick_price_before,
        (select any_value(after_value) from prices_moved where offer_id = picks.offer_id) as pick_price_after,
        -- the label and the key of the result new tonight of the pick's benchmark source and reference
        pick_added.label as pick_result_added,
        pick_added.subject as pick_result_added_key,
        (select string_agg(subject, ', ' order by subject) from sources_changed
         where change_kind = 'source_stale'
           and subject in (picks.price_source_id, picks.benchmark_source_id,
                           picks.previous_price_source_id, picks.previous_benchmark_source_id)) as stale_sources,
        (select list(subject order by subject) from sources_changed
         where change_kind = 'source_stale'
           and subject in (picks.price_source_id, picks.benchmark_source_id,
                           picks.previous_price_source_id, picks.previous_benchmark_source_id)) as stale_source_ids,
        (select count(*) from catalog_changed) > 0 as catalog_edited,
        -- hweval's SQL models changed since the compared run (a release; a run before they were recorded counts as
        -- one): the labels they write may read otherwise with nothing else moved
        coalesce((select previous_run_id is not null and previous_models_digest is distinct from models_digest
                  from runs), false) as models_changed
    from picks
    left join ranks_now as previous_now on previous_now.candidate_id = picks.previous_candidate_id
    left join ranks_before as pick_before on pick_before.candidate_id = picks.candidate_id
    left join results_added_from as pick_added
        on pick_added.source_id = picks.benchmark_source_id and pick_added.source_ref = picks.benchmark_ref
),

best_changed as (
    select
        'best_offer_changed' as change_kind,
        workload_id as subject,
        workload_id,
        offer_id,
        previous_offer_id,
        label,
        previous_label,
        -- a workload whose objective changed (cost <-> energy) has no before value in the new unit
        case when previous_outcome_metric = outcome_metric or outcome_metric is null then previous_outcome_value end
            as before_value,
        outcome_value as after_value,
        coalesce(outcome_metric, previous_outcome_metric) as unit,
        previous_pick_now_value,
        case
            when candidate_id is null then 'no candidate'
            when previous_outcome_metric <> outcome_metric then 'objective changed'
            when previous_offer_removed is not null then 'offer withdrawn'
            when previous_price_ratio is not null then 'price move'
            when pick_price_ratio is not null then 'price move'
            when pick_offer_added is not null then 'new offer'
            when pick_result_added is not null then 'new result'
            -- a pick ranked in the previous run too whose figure's basis moved (a result that calibrates it, one
            -- that no longer does), or whose label moved on a night with no catalog edit or release; a pick that
            -- was no candidate then is the catalog's doing, or a new candidate
            when pick_new_evidence then 'new result'
            when stale_sources is not null then 'stale source'
            when catalog_edited then 'catalog edit'
            when pick_previous_basis is not null and pick_label_moved and models_changed then 'models changed'
            when pick_previous_basis is null then 'new candidate'
            else 'smaller moves'
        end as reason,
        case
            when candidate_id is null then 'no candidate can run it in this run'
            when previous_outcome_metric <> outcome_metric then
                'the workload is now ranked by ' || outcome_metric || ' (was ' || previous_outcome_metric || ')'
            when previous_offer_removed is not null then previous_label || ' is no longer offered'
            when previous_price_ratio is not null
                then previous_label || ' price rose ' || figures_text(previous_price_ratio) || 'x ('
                     || usd_text(previous_price_before) || ' to ' || usd_text(previous_price_after)
                     || ' USD per hour)'
            when pick_price_ratio is not null
                then label || ' price fell to ' || figures_text(pick_price_ratio) || 'x ('
                     || usd_text(pick_price_before) || ' to ' || usd_text(pick_price_after)
                     || ' USD per hour)'
            when pick_offer_added is not null then label || ' is a new offer'
            when pick_result_added is not null then 'a new benchmark result: ' || pick_result_added
            when pick_new_evidence then label || ' is now ' || basis || coalesce(': ' || benchmark_label, '')
            when stale_sources is not null then 'stale: ' || stale_sources
            when catalog_edited then 'the catalogs changed since the previous run'
            when pick_previous_basis is not null and pick_label_moved and models_changed
                then 'hweval''s models changed since the previous run (a new release): ' || label || ' is ' || basis
                     || coalesce(': ' || benchmark_label, '')
            when pick_previous_basis is null then label || ' was not a candidate in the previous run'
            else 'prices or results moved by less than the threshold each'
        end as reason_detail,
        -- the other changes of this run that the reason names (their subjects): a workload's page says them in its
        -- best-offer line and does not count them again among the market changes it leaves to the index
        case
            when candidate_id is null then null
            -- a workload new to the run: its line says "the previous run had no candidate", no reason's detail
            when previous_offer_id is null then null
            when previous_outcome_metric <> outcome_metric then null
            when previous_offer_removed is not null then [previous_offer_id]
            when previous_price_ratio is not null then [previous_offer_id]
            when pick_price_ratio is not null then [offer_id]
            when pick_offer_added is not null then [offer_id]
            when pick_result_added is not null then [pick_result_added_key]
            when pick_new_evidence then null
            when stale_sources is not null then stale_source_ids
            when catalog_edited then ['catalog']
        end as reason_subjects
    from (
        select *,
            pick_previous_basis is not null
                and (pick_basis_moved or (pick_label_moved and not catalog_edited and not models_changed))
                as pick_new_evidence
        from explained
    )
),

listed as (
    select change_kind, subject, null as workload_id, offer_id, null as previous_offer_id, label,
           null as previous_label, before_value, after_value, unit, null::double as previous_pick_now_value,
           null as reason, null as reason_detail, null::varchar[] as reason_subjects
    from (
        select * from offers_added
        union all select * from offers_removed
        union all select * from prices_moved
        union all select * from results_added
        union all select * from results_withdrawn
        union all select * from sources_changed
        union all select * from catalog_changed
    )
    union all
    select change_kind, subject, workload_id, offer_id, previous_offer_id, label, previous_label, before_value,
           after_value, unit, previous_pick_now_value, reason, reason_detail, reason_subjects
    from best_changed
),

final as (
    select
        compared.run_id,
        compared.as_of,
        compared.previous_run_id,
        compared.previous_as_of,
        listed.change_kind,
        listed.subject,
        listed.workload_id,
        listed.offer_id,
        listed.previous_offer_id,
        listed.label,
        listed.previous_label,
        listed.before_value,
        listed.after_value,
        case when listed.before_value > 0 then listed.after_value / listed.before_value end as ratio,
        listed.after_value - listed.before_value as delta_value,
        listed.unit,
        listed.previous_pick_now_value,
        listed.reason,
        listed.reason_detail,
        listed.reason_subjects
    from listed
    cross join compared
)

select * from final
