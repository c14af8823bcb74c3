-- raw.azure_retail: one row per Retail Prices API item, as landed.
create table if not exists raw.azure_retail (
    run_id varchar not null,
    as_of date not null,
    source_id varchar not null,
    data_as_of date not null,
    row_no integer not null,
    source_ref varchar not null,
    arm_region_name varchar,
    location varchar,
    arm_sku_name varchar,
    sku_name varchar,
    meter_name varchar,
    product_name varchar,
    service_name varchar,
    price_type varchar,               -- Consumption | Reservation | DevTestConsumption
    unit_of_measure varchar,
    currency_code varchar,
    reservation_term varchar,
    effective_start_date varchar,
    sku_id varchar,
    meter_id varchar,
    is_primary_meter_region boolean,  -- isPrimaryMeterRegion; null where the item does not say
    retail_price double,
    unit_price double
);
