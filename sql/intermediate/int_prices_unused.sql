-- Grain: one row per landed price that priced no offer and is listed nowhere else, with why: a GCP SKU that prices a
-- part of an instance type in a region and term where another of its parts has no SKU (the offer cannot be
-- composed; int_price_components_unmatched lists a part that matches no SKU anywhere), and a price-sheet discount
-- that matches no public offer (a misspelt instance type, a term with no offer). The offers page lists them: nothing
-- landed vanishes unseen between raw.* and the reports.
with components as (
    select * from catalog.instance_price_components where cloud = 'gcp'
),

gcp as (
    select * from staging.stg_gcp_billing__skus
),

discounts as (
    select * from staging.stg_price_sheet__entries where entry_kind = 'discount'
),

offers as (
    select * from intermediate.int_offers_priced
),

matched as (
    -- as int_offers_priced composes GCP offers: each part's list price (tier 0) in a region and term
    select
        components.instance_type, components.sku_description_prefix,
        gcp.region, gcp.pricing_term, gcp.term_detail, gcp.source_id, gcp.source_ref
    from components
    inner join gcp on gcp.sku_prefix = components.sku_description_prefix
    where gcp.pricing_term in ('on_demand', 'spot', 'reserved') and gcp.start_usage_amount = 0
),

missing as (
    -- per instance type x region x term with a part priced: the parts that have no SKU there
    select
        priced.instance_type, priced.region, priced.pricing_term, priced.term_detail,
        string_agg(components.sku_description_prefix, '; ' order by components.sku_description_prefix)
            as missing_parts
    from (select distinct instance_type, region, pricing_term, term_detail from matched) as priced
    inner join components on components.instance_type = priced.instance_type
    where not exists (
        select 1 from matched
        where matched.instance_type = priced.instance_type and matched.region = priced.region
            and matched.pricing_term = priced.pricing_term
            and matched.term_detail is not distinct from priced.term_detail
            and matched.sku_description_prefix = components.sku_description_prefix
    )
    group by all
),

final as (
    select
        'gcp' as cloud, matched.region, matched.instance_type, matched.pricing_term, matched.source_id,
        matched.source_ref,
        'prices "' || matched.sku_description_prefix || '" of ' || matched.instance_type || ' ' || matched.pricing_term
            || coalesce(' ' || matched.term_detail, '') || ' in ' || matched.region
            || ', whose other parts have no SKU there (' || missing.missing_parts || '): no offer' as unused_reason
    from matched
    inner join missing
        on missing.instance_type = matched.instance_type and missing.region = matched.region
        and missing.pricing_term = matched.pricing_term
        and missing.term_detail is not distinct from matched.term_detail
    union all
    select
        discounts.cloud, discounts.region, discounts.instance_type, discounts.applies_to as pricing_term,
        discounts.source_id, discounts.source_ref,
        'a ' || discounts.percent_off || '% discount off ' || discounts.cloud || ' ' || discounts.applies_to
            || ' prices of ' || coalesce(discounts.instance_type, '*') || ' in ' || coalesce(discounts.region, 'every region')
            || ' that matches no public offer of this run' as unused_reason
    from discounts
    where not exists (
        select 1 from offers where starts_with(offers.price_ref, discounts.source_ref || '; ')
    )
)

select * from final
