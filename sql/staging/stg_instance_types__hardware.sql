-- Grain: one row per cloud x instance type x distinct hardware (device kind, device name, device count, memory per
-- device, vCPUs, host memory) among the regions that list it; a type with two kinds of device has a row for each.
-- `regions` lists where that hardware is listed; `hardware_variants` counts the distinct hardware listings of the
-- cloud + instance type (per region or zone, all its device groups together): above 1, regions disagree.
-- GCP machine types name no GPU vendor: it is the first word of the accelerator type's description in the same run.
with source as (
    -- this run's rows, or a stale source's last good ones
    select * from raw.instance_types
    semi join staging.stg_ops__source_runs_used using (source_id, run_id)
),

accelerator_vendors as (
    select
        cloud,
        device_name,
        min(split_part(device_description, ' ', 1)) as device_manufacturer
    from source
    where listing = 'accelerator_types' and device_kind = 'gpu' and device_description is not null
    group by cloud, device_name
),

listed as (
    select
        s.source_id,
        s.data_as_of,
        s.row_no,
        s.source_ref,
        s.cloud,
        s.region,
        s.zone,
        s.instance_type,
        s.device_kind,
        coalesce(s.device_manufacturer, v.device_manufacturer) as device_manufacturer,
        s.device_name,
        cast(s.device_count as bigint) as device_count,
        cast(round(s.device_memory_mib) as bigint) as device_memory_mib,
        cast(s.vcpu as bigint) as vcpu,
        cast(round(s.memory_mib) as bigint) as memory_mib,
        s.cpu_manufacturer,
        s.cpu_architecture
    from source as s
    left join accelerator_vendors as v
        on s.cloud = v.cloud and s.device_name = v.device_name and s.device_kind = 'gpu'
    where s.instance_type is not null
),

listings as (
    -- one per cloud x instance type x region (zone): its hardware, every device group together
    select
        cloud,
        instance_type,
        region,
        zone,
        string_agg(
            concat_ws('|', coalesce(device_kind, ''), coalesce(device_name, ''), coalesce(cast(device_count as varchar), ''),
                      coalesce(cast(device_memory_mib as varchar), ''), coalesce(cast(vcpu as varchar), ''),
                      coalesce(cast(memory_mib as varchar), '')),
            ';' order by device_kind, device_name, device_count, device_memory_mib
        ) as hardware
    from listed
    group by cloud, instance_type, region, zone
),

variants as (
    select cloud, instance_type, count(distinct hardware) as hardware_variants
    from listings
    group by cloud, instance_type
),

grouped as (
    select
        arg_min(source_id, (source_id, row_no)) as source_id,
        max(data_as_of) as data_as_of,
        arg_min(source_ref, (source_id, row_no)) as source_ref,
        cloud,
        instance_type,
        list_sort(list_distinct(list(region))) as regions,
        device_kind,
        arg_min(device_manufacturer, (source_id, row_no)) as device_manufacturer,
        device_name,
        device_count,
        device_memory_mib,
        vcpu,
        memory_mib,
        arg_min(cpu_manufacturer, (source_id, row_no)) as cpu_manufacturer,
        arg_min(cpu_architecture, (source_id, row_no)) as cpu_architecture
    from listed
    group by cloud, instance_type, device_kind, device_name, device_count, device_memory_mib, vcpu, memory_mib
),

final as (
    select
        g.source_id,
        g.data_as_of,
        g.source_ref,
        g.cloud,
        g.instance_type,
        g.regions,
        v.hardware_variants,
        g.device_kind,
        g.device_manufacturer,
        g.device_name,
        g.device_count,
        g.device_memory_mib,
        g.vcpu,
        g.memory_mib,
        g.cpu_manufacturer,
        g.cpu_architecture
    from grouped as g
    inner join variants as v using (cloud, instance_type)
)

select * from final
