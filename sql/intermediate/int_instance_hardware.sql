-- Grain: one row per cloud x instance type whose hardware a source lists or catalogs/instances.yaml declares.
-- The clouds' instance-type APIs (staging.stg_instance_types__hardware: EC2 DescribeInstanceTypes, Azure Resource
-- SKUs, GCP machineTypes) say what an instance carries; the device name they give is matched to accelerators.yaml
-- through its api_names (a name two parts share is settled by the listed memory, within 10%). instances.yaml sits
-- on top: a field it sets wins over the listing, and where the two differ the row says so with the entry's reason
-- (`correction`); instance types no API lists (TPU slices, on-prem systems) come from instances.yaml alone.
-- accelerator_id is null where the hardware is not known (the device is not in accelerators.yaml, two parts
-- match, regions disagree): `unknown_reason` says which, and the offers of that instance type are unknown offers.
-- Chip memory always comes from accelerators.yaml: a listing's memory per device only picks the part and, where
-- it disagrees by more than 15% (trn2 lists 512 GiB per Neuron device; the chip has 96 GiB, 103.08 GB), the row says so.
with listed_variants as (
    select * from staging.stg_instance_types__hardware
),

api_names as (
    select * from catalog.accelerator_api_names
),

accelerators as (
    select * from catalog.accelerators
),

declared as (
    select * from catalog.instances
),

listed as (
    -- one listing per cloud x instance type; regions that list different hardware leave it undecided
    select
        cloud,
        instance_type,
        -- staging has one row per device group of one hardware variant: variants are regions disagreeing, and
        -- several groups of one variant are an instance carrying two kinds of device
        max(hardware_variants) as hardware_variants,
        count(*) as device_groups,
        any_value(device_kind) as device_kind,
        any_value(device_name) as device_name,
        any_value(device_count) as device_count,
        any_value(device_memory_mib) as device_memory_mib,
        any_value(vcpu) as vcpu,
        any_value(memory_mib) as memory_mib,
        -- the figures thousands separated, as the pages write them (28,672 MiB)
        string_agg(concat_ws(' ', declared_text(device_count) || ' x', device_name,
                             '(' || declared_text(device_memory_mib) || ' MiB)', declared_text(vcpu) || ' vCPU',
                             declared_text(memory_mib) || ' MiB') || ' in ' || array_to_string(regions, ', '),
                   '; ' order by source_ref) as listed_hardware,
        min(source_id) as listing_source_id,
        min(data_as_of) as listing_as_of,
        string_agg(source_ref, '; ' order by source_ref) as listing_ref
    from listed_variants
    group by cloud, instance_type
),

candidates as (
    -- the parts a listed device name may mean: the name, and the memory where the catalog gives one for it
    select listed.cloud, listed.instance_type, api_names.accelerator_id
    from listed
    inner join api_names
        on api_names.cloud = listed.cloud and api_names.api_name_key = lower(listed.device_name)
    where listed.hardware_variants = 1 and listed.device_groups = 1
        and (api_names.memory_mib is null or listed.device_memory_mib is null
             or abs(listed.device_memory_mib - api_names.memory_mib) <= 0.1 * api_names.memory_mib)
),

matched as (
    select
        cloud,
        instance_type,
        case when count(distinct accelerator_id) = 1 then any_value(accelerator_id) end as accelerator_id,
        string_agg(distinct accelerator_id, ', ' order by accelerator_id) as matching_ids
    from candidates
    group by cloud, instance_type
),

resolved_listings as (
    select
        listed.*,
        matched.accelerator_id as listed_accelerator_id,
        case
            when listed.hardware_variants > 1
                then 'regions list different hardware: ' || listed.listed_hardware
            when listed.device_groups > 1
                then 'the listing names more than one kind of device: ' || listed.listed_hardware
            when listed.device_name is null or listed.device_count is null
                then 'the listing names no accelerator'
            when matched.accelerator_id is null and matched.matching_ids is not null
                then 'the listed device ' || listed.device_name || ' could be any of ' || matched.matching_ids
            when matched.accelerator_id is null
                then 'the listed device ' || listed.device_name
                    || coalesce(' (' || declared_text(listed.device_memory_mib) || ' MiB)', '')
                    || ' is not among the api_names in accelerators.yaml'
        end as listing_unmatched_reason
    from listed
    left join matched using (cloud, instance_type)
),

combined as (
    select
        coalesce(declared.cloud, listing.cloud) as cloud,
        coalesce(declared.instance_type, listing.instance_type) as instance_type,
        coalesce(declared.accelerator_id, listing.listed_accelerator_id) as accelerator_id,
        coalesce(declared.accelerator_count, listing.device_count) as accelerator_count,
        coalesce(declared.vcpu, listing.vcpu) as vcpu,
        coalesce(declared.memory_gib, listing.memory_mib / 1024.0) as memory_gib,
        -- no listing source lands network bandwidth yet: instances.yaml declares it with its source
        declared.network_gbps,
        listing.cloud is not null as is_listed,
        declared.cloud is not null as is_declared,
        concat_ws('; ',
            case when declared.accelerator_id is not null
                      and declared.accelerator_id is distinct from listing.listed_accelerator_id
                      and listing.device_name is not null
                 then 'accelerator listed as ' || coalesce(listing.listed_accelerator_id, listing.device_name)
                      || ', corrected to ' || declared.accelerator_id end,
            case when declared.accelerator_count <> listing.device_count
                 then 'accelerator count listed as ' || listing.device_count || ', corrected to '
                      || declared.accelerator_count end,
            case when declared.vcpu <> listing.vcpu
                 then 'vCPUs listed as ' || listing.vcpu || ', corrected to ' || declared.vcpu end,
            case when abs(declared.memory_gib - listing.memory_mib / 1024.0) > 0.5
                 then 'host memory listed as ' || round(listing.memory_mib / 1024.0, 1) || ' GiB, corrected to '
                      || declared.memory_gib || ' GiB' end
        ) as corrected_fields,
        declared.correction,
        declared.note as catalog_note,
        declared.source as catalog_source,
        listing.device_name,
        listing.device_memory_mib,
        listing.listed_hardware,
        listing.listing_source_id,
        listing.listing_as_of,
        listing.listing_ref,
        listing.listing_unmatched_reason
    from declared
    full outer join resolved_listings as listing
        on listing.cloud = declared.cloud and listing.instance_type = declared.instance_type
),

final as (
    select
        combined.cloud,
        combined.instance_type,
        combined.accelerator_id,
        combined.accelerator_count,
        combined.vcpu,
        combined.memory_gib,
        combined.network_gbps,
        case
            when not combined.is_listed then 'instances.yaml'
            when combined.corrected_fields <> '' then 'listed, corrected in instances.yaml'
            -- a CPU-only listing names no device: the CPU part (and its sockets) is instances.yaml's
            when combined.is_declared and combined.device_name is null then 'listed, part from instances.yaml'
            when combined.is_declared then 'listed, instances.yaml agrees'
            else 'listed'
        end as hardware_basis,
        nullif(combined.corrected_fields, '') || ': '
            || coalesce(combined.correction, 'instances.yaml gives no reason') as correction_note,
        case
            when combined.accelerator_id is not null
                and combined.device_memory_mib is not null
                and accelerators.memory_gb is not null
                and abs(combined.device_memory_mib * 1048576 / 1e9 - accelerators.memory_gb) > 0.15 * accelerators.memory_gb
            then 'the listing gives ' || round(combined.device_memory_mib / 1024.0, 1) || ' GiB per device; '
                || 'accelerators.yaml''s ' || accelerators.memory_gb || ' GB per chip is used'
        end as listing_memory_note,
        case
            when combined.accelerator_id is null then coalesce(combined.listing_unmatched_reason,
                'instances.yaml names no accelerator and no source lists this instance type')
            when combined.accelerator_id not in (select accelerator_id from accelerators)
                then 'accelerator ' || combined.accelerator_id || ' is not in accelerators.yaml'
            when combined.accelerator_count is null
                then 'no accelerator count: neither listed nor in instances.yaml'
        end as unknown_reason,
        combined.device_name as listed_device_name,
        combined.listed_hardware,
        combined.catalog_note,
        combined.catalog_source,
        combined.listing_source_id,
        combined.listing_as_of,
        combined.listing_ref
    from combined
    left join accelerators using (accelerator_id)
)

select * from final
