-- PLACEHOLDER until the instance-type sources land (raw.instance_types): no listings, the contract's columns.
select
    null::varchar as source_id, null::date as data_as_of, null::varchar as source_ref, null::varchar as cloud,
    null::varchar as instance_type, null::varchar[] as regions, null::bigint as hardware_variants,
    null::varchar as device_kind, null::varchar as device_manufacturer, null::varchar as device_name,
    null::bigint as device_count, null::bigint as device_memory_mib, null::bigint as vcpu, null::bigint as memory_mib,
    null::varchar as cpu_manufacturer, null::varchar as cpu_architecture
where false
