-- Grain: one row per offer = cloud x region x instance type x pricing term (x term detail, for reserved and
-- private terms), priced this run. AWS and Azure price an instance per hour; GCP composes it from SKUs (GPUs or
-- TPU chips, vCPUs, RAM) and an offer exists only where every component has a price in that region. Reserved
-- terms are amortised: recurring hourly + upfront / term hours. Spot takes the lowest latest price among a
-- region's zones (price_zone; price_zones and the highest zone's price beside it). The user's price sheet adds private quotes, discounts off these public prices, and on-prem
-- systems; a quote for an instance type the catalog does not list brings its own hardware (accelerator and
-- count). An offer's hardware comes from int_instance_hardware (the clouds' instance-type APIs, corrected by
-- instances.yaml); offers of instance types whose hardware is not known are in int_offers_unknown.
with aws as (
    select * from staging.stg_aws_pricing__prices
),

aws_spot as (
    select * from staging.stg_aws_spot__prices
),

azure as (
    select * from staging.stg_azure_retail__prices
),

gcp as (
    select * from staging.stg_gcp_billing__skus
),

sheet as (
    select * from staging.stg_price_sheet__entries
),

instances as (
    -- hardware known: listed by a cloud's instance-type API or declared in instances.yaml
    select * from intermediate.int_instance_hardware
    where unknown_reason is null
),

components as (
    select * from catalog.instance_price_components
),

aws_on_demand as (
    select
        cloud, region, instance_type, pricing_term,
        null as term_detail,
        null::integer as term_months,
        price_usd as recurring_usd_per_hour,
        null::double as upfront_usd,
        price_usd as usd_per_hour,
        null as price_note,
        source_id as price_source_id,
        data_as_of as price_as_of,
        source_ref as price_ref
    from aws
    where is_plain_linux and unit = 'Hrs' and pricing_term = 'on_demand'
),

aws_reserved as (
    -- one reserved offer = one offer term of one SKU: its hourly rate and, for Partial / All Upfront, its fee
    select
        cloud, region, instance_type, pricing_term,
        any_value(term_detail) as term_detail,
        any_value(term_months) as term_months,
        coalesce(sum(price_usd) filter (where unit = 'Hrs'), 0) as recurring_usd_per_hour,
        coalesce(sum(price_usd) filter (where unit = 'Quantity'), 0) as upfront_usd,
        effective_usd_per_hour(recurring_usd_per_hour, upfront_usd, term_hours(any_value(term_months)))
            as usd_per_hour,
        null as price_note,
        min(source_id) as price_source_id,
        min(data_as_of) as price_as_of,
        string_agg(source_ref, '; ' order by source_ref) as price_ref
    from aws
    where is_plain_linux and pricing_term = 'reserved'
    group by cloud, region, instance_type, pricing_term, sku, offer_term_code
),

aws_spot_offers as (
    select
        cloud, region, instance_type, pricing_term,
        null as term_detail,
        null::integer as term_months,
        min(price_usd) as recurring_usd_per_hour,
        null::double as upfront_usd,
        min(price_usd) as usd_per_hour,
        'lowest latest price of ' || count(*) || ' zone(s): ' || arg_min(availability_zone, price_usd)
            || ' at ' || arg_min(price_timestamp, price_usd)
            || case when count(*) > 1 then ' (highest ' || max(price_usd) || ')' else '' end as price_note,
        -- the zones behind the price: the decision says what the dearest zone would cost
        arg_min(availability_zone, price_usd) as price_zone,
        count(*) as price_zones,
        max(price_usd) as highest_zone_usd_per_hour,
        min(source_id) as price_source_id,
        min(data_as_of) as price_as_of,
        arg_min(source_ref, price_usd) as price_ref
    from aws_spot
    where is_plain_linux
    group by cloud, region, instance_type, pricing_term
),

azure_hourly as (
    select
        cloud, region, instance_type, pricing_term,
        null as term_detail,
        null::integer as term_months,
        price_usd as recurring_usd_per_hour,
        null::double as upfront_usd,
        price_usd as usd_per_hour,
        null as price_note,
        source_id as price_source_id,
        data_as_of as price_as_of,
        source_ref as price_ref
    from azure
    where operating_system = 'Linux' and unit_of_measure = '1 Hour' and pricing_term in ('on_demand', 'spot', 'low_priority')
),

azure_reserved as (
    -- a Reservation's retailPrice is the total for the whole term, not an hourly price
    select
        cloud, region, instance_type, pricing_term,
        term_detail,
        term_months,
        0.0 as recurring_usd_per_hour,
        price_usd as upfront_usd,
        effective_usd_per_hour(0.0, price_usd, term_hours(term_months)) as usd_per_hour,
        'the reservation price ' || price_usd || ' USD is the total for ' || term_detail as price_note,
        source_id as price_source_id,
        data_as_of as price_as_of,
        source_ref as price_ref
    from azure
    where operating_system = 'Linux' and pricing_term = 'reserved' and term_months is not null
),

component_counts as (
    select cloud, instance_type, count(*) as components_required
    from components
    group by all
),

gcp_component_prices as (
    select
        components.cloud,
        components.instance_type,
        gcp.region,
        gcp.pricing_term,
        gcp.term_detail,
        gcp.term_months,
        components.quantity * gcp.price_usd as component_usd_per_hour,
        gcp.source_id,
        gcp.data_as_of,
        gcp.source_ref
    from components
    inner join gcp on gcp.sku_prefix = components.sku_description_prefix
    where components.cloud = 'gcp'
        and gcp.pricing_term in ('on_demand', 'spot', 'reserved')
        and gcp.start_usage_amount = 0  -- the list price; later tiers are volume discounts
),

gcp_offers as (
    select
        prices.cloud, prices.region, prices.instance_type, prices.pricing_term,
        prices.term_detail,
        any_value(prices.term_months) as term_months,
        sum(prices.component_usd_per_hour) as recurring_usd_per_hour,
        null::double as upfront_usd,
        sum(prices.component_usd_per_hour) as usd_per_hour,
        null as price_note,
        min(prices.source_id) as price_source_id,
        min(prices.data_as_of) as price_as_of,
        string_agg(prices.source_ref, '; ' order by prices.source_ref) as price_ref
    from gcp_component_prices as prices
    inner join component_counts using (cloud, instance_type)
    group by prices.cloud, prices.region, prices.instance_type, prices.pricing_term, prices.term_detail,
        component_counts.components_required
    having count(*) = component_counts.components_required
),

public as (
    select * from aws_on_demand
    union all by name
    select * from aws_reserved
    union all by name
    select * from aws_spot_offers
    union all by name
    select * from azure_hourly
    union all by name
    select * from azure_reserved
    union all by name
    select * from gcp_offers
),

quotes as (
    select
        cloud, region, instance_type, pricing_term,
        coalesce(note, quoted_source) || coalesce(', ' || term_months || '-month term', '') as term_detail,
        term_months,
        usd_per_hour as recurring_usd_per_hour,
        upfront_usd,
        case when term_months is null then usd_per_hour
             else effective_usd_per_hour(usd_per_hour, upfront_usd, term_hours(term_months)) end as usd_per_hour,
        'private quote: ' || quoted_source as price_note,
        source_id as price_source_id,
        data_as_of as price_as_of,
        source_ref as price_ref,
        accelerator_id as quoted_accelerator_id,
        accelerator_count as quoted_accelerator_count
    from sheet
    where entry_kind = 'quote'
),

discounts as (
    -- a negotiated share off a public price: each public offer it applies to gets a private twin. A share off
    -- reclaimable capacity (spot, low priority) is still that capacity: its twin keeps the term, so its reclaims are
    -- priced (rework, a spare unit, lost work) and a workload that does not buy the term does not buy it
    select
        public.cloud, public.region, public.instance_type,
        case when public.pricing_term in ('spot', 'low_priority') then public.pricing_term else 'private' end
            as pricing_term,
        concat_ws(' ', public.pricing_term, public.term_detail) || ' less ' || sheet.percent_off || '%' as term_detail,
        public.term_months,
        public.recurring_usd_per_hour * (1 - sheet.percent_off / 100) as recurring_usd_per_hour,
        public.upfront_usd * (1 - sheet.percent_off / 100) as upfront_usd,
        public.usd_per_hour * (1 - sheet.percent_off / 100) as usd_per_hour,
        sheet.percent_off || '% off the public ' || public.pricing_term || ' price ' || round(public.usd_per_hour, 4)
            || ' USD/h (' || sheet.quoted_source || ')' as price_note,
        public.price_zone,
        public.price_zones,
        public.highest_zone_usd_per_hour * (1 - sheet.percent_off / 100) as highest_zone_usd_per_hour,
        sheet.source_id as price_source_id,
        least(sheet.data_as_of, public.price_as_of) as price_as_of,
        sheet.source_ref || '; ' || public.price_ref as price_ref
    from sheet
    inner join public
        on public.cloud = sheet.cloud
        and public.pricing_term = sheet.applies_to
        and (sheet.instance_type = '*' or public.instance_type = sheet.instance_type)
        and (sheet.region is null or public.region = sheet.region)
    where sheet.entry_kind = 'discount'
),

priced as (
    select * from public
    union all by name
    select * from quotes
    union all by name
    select * from discounts
),

cloud_offers as (
    select
        priced.* exclude (quoted_accelerator_id, quoted_accelerator_count),
        instances.accelerator_id,
        instances.accelerator_count,
        instances.hardware_basis,
        concat_ws('; ', instances.correction_note, instances.listing_memory_note) as hardware_note
    from priced
    inner join instances
        on instances.cloud = priced.cloud and instances.instance_type = priced.instance_type
),

unlisted_quotes as (
    -- hardware the catalog does not list (a neocloud's or a reseller's box): the quote says what it holds
    select
        quotes.* exclude (quoted_accelerator_id, quoted_accelerator_count),
        quoted_accelerator_id as accelerator_id,
        quoted_accelerator_count as accelerator_count,
        'price sheet quote' as hardware_basis
    from quotes
    anti join instances
        on instances.cloud = quotes.cloud and instances.instance_type = quotes.instance_type
    where quoted_accelerator_id is not null and quoted_accelerator_count > 0
),

on_prem as (
    select
        cloud, region, instance_type, pricing_term,
        null as term_detail,
        null::integer as term_months,
        on_prem_usd_per_hour as recurring_usd_per_hour,
        null::double as upfront_usd,
        on_prem_usd_per_hour as usd_per_hour,
        'owned: capex over its life + power + operating cost (' || quoted_source || ')' as price_note,
        source_id as price_source_id,
        data_as_of as price_as_of,
        source_ref as price_ref,
        accelerator_id,
        accelerator_count,
        'price sheet (on-prem)' as hardware_basis,
        -- what the owner pays for energy (in usd_per_hour already): the energy of an outcome is priced with it
        power_kw as site_power_kw,
        usd_per_kwh,
        pue as site_pue
    from sheet
    where entry_kind = 'on_prem'
),

offers as (
    select * from cloud_offers
    union all by name
    select * from unlisted_quotes
    union all by name
    select * from on_prem
),

final as (
    select
        cloud || ':' || region || ':' || instance_type || ':' || pricing_term
            || coalesce(':' || nullif(trim(regexp_replace(lower(term_detail), '[^a-z0-9.]+', '-', 'g'), '-'), ''), '')
            as offer_id,
        cloud,
        region,
        instance_type,
        pricing_term,
        term_detail,
        term_months,
        accelerator_id,
        accelerator_count,
        recurring_usd_per_hour,
        upfront_usd,
        usd_per_hour,
        usd_per_chip_hour(usd_per_hour, accelerator_count) as usd_per_chip_hour,
        price_note,
        price_zone,
        price_zones,
        highest_zone_usd_per_hour,
        price_source_id,
        price_as_of,
        price_ref,
        hardware_basis,
        nullif(hardware_note, '') as hardware_note,
        site_power_kw,
        usd_per_kwh,
        site_pue,
        -- a price from a snapshot file sources.yaml marks unverified (no price catalog confirms it)
        exists (select 1 from catalog.sources as files
                where files.source_id = offers.price_source_id and files.unverified
                    and contains(offers.price_ref, files.path)) as price_unverified
    from offers
)

select * from final
