-- raw.instance_types: one row per device group of one instance type as one region (GCP: one zone) lists it, from
-- the clouds' own APIs (aws_instance_types, azure_skus, gcp_machine_types); a CPU-only type has one row with the
-- device columns null. Figures as listed, wrong ones included (instances.yaml corrects them).
create table if not exists raw.instance_types (
    run_id varchar not null,
    as_of date not null,              -- the run's as-of date
    source_id varchar not null,       -- sources.yaml id
    data_as_of date not null,         -- the file's or response's own as-of date
    row_no integer not null,          -- position among this source's rows in this run
    source_ref varchar not null,      -- file or request and item (device entry) the row came from
    cloud varchar,                    -- aws | azure | gcp
    listing varchar,                  -- describe_instance_types | resource_skus | machine_types | accelerator_types
    region varchar,                   -- AWS region, Azure location, the region of a GCP zone
    zone varchar,                     -- GCP zone (null for AWS and Azure)
    instance_type varchar,            -- null for a GCP accelerator type (a device, not an instance type)
    device_kind varchar,              -- gpu | neuron | inference | tpu; null for CPU-only
    device_manufacturer varchar,      -- as listed (AWS); null where the API names none
    device_name varchar,              -- AWS GpuInfo/NeuronInfo Name (H100, Trainium2); GCP accelerator type
                                      -- (nvidia-h100-80gb); Azure: the SKU family (no GPU model is listed)
    device_description varchar,       -- GCP accelerator type description ("NVIDIA H100 80GB")
    device_count_text varchar,        -- the count as published ("8"; "0.25" is refused by validation)
    device_count double,
    device_memory_mib double,         -- per device as listed; null where the API gives none (Azure, GCP)
    max_devices_per_instance double,  -- GCP accelerator type maximumCardsPerInstance
    vcpu_text varchar,                -- the vCPU count as published
    vcpu double,
    memory_mib double,                -- host memory (Azure MemoryGB x 1024)
    cpu_manufacturer varchar,         -- AWS ProcessorInfo Manufacturer (Intel, AMD, AWS); null elsewhere
    cpu_architecture varchar          -- AWS SupportedArchitectures (comma-joined), Azure CpuArchitectureType,
                                      -- GCP architecture
);
