-- Grain: one row: a digest of the catalog this run read (accelerators, instances, models, workloads, pricing
-- terms, defaults), so a change of ranking can be traced to a catalog edit between two runs.
with parts as (
    select 'accelerators' as part, md5(coalesce(string_agg(t::varchar, '\n' order by t::varchar), '')) as digest
    from catalog.accelerators as t
    union all
    select 'accelerator_aliases', md5(coalesce(string_agg(t::varchar, '\n' order by t::varchar), ''))
    from catalog.accelerator_aliases as t
    union all
    select 'instances', md5(coalesce(string_agg(t::varchar, '\n' order by t::varchar), ''))
    from catalog.instances as t
    union all
    select 'instance_price_components', md5(coalesce(string_agg(t::varchar, '\n' order by t::varchar), ''))
    from catalog.instance_price_components as t
    union all
    select 'models', md5(coalesce(string_agg(t::varchar, '\n' order by t::varchar), ''))
    from catalog.models as t
    union all
    select 'workloads', md5(coalesce(string_agg(t::varchar, '\n' order by t::varchar), ''))
    from catalog.workloads as t
    union all
    select 'workload_precisions', md5(coalesce(string_agg(t::varchar, '\n' order by t::varchar), ''))
    from catalog.workload_precisions as t
    union all
    select 'family_defaults', md5(coalesce(string_agg(t::varchar, '\n' order by t::varchar), ''))
    from catalog.family_defaults as t
    union all
    select 'pricing_terms', md5(coalesce(string_agg(t::varchar, '\n' order by t::varchar), ''))
    from catalog.pricing_terms as t
    union all
    select 'mlperf_training_tasks', md5(coalesce(string_agg(t::varchar, '\n' order by t::varchar), ''))
    from catalog.mlperf_training_tasks as t
),

final as (
    select
        md5(string_agg(part || '=' || digest, ';' order by part)) as catalog_digest,
        string_agg(part || '=' || digest, ';' order by part) as part_digests
    from parts
)

select * from final
