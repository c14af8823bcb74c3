-- raw.aws_pricing: one row per price dimension of a pricing.get_products product, as landed.
create table if not exists raw.aws_pricing (
    run_id varchar not null,
    as_of date not null,              -- the run's as-of date
    source_id varchar not null,       -- sources.yaml id
    data_as_of date not null,         -- the file's or response's own as-of date
    row_no integer not null,          -- position among this source's rows in this run
    source_ref varchar not null,      -- file and PriceList item the row came from
    sku varchar,
    instance_type varchar,
    region_code varchar,
    location varchar,
    instance_family varchar,
    operating_system varchar,
    license_model varchar,
    pre_installed_sw varchar,
    tenancy varchar,
    capacity_status varchar,
    market_option varchar,
    usage_type varchar,
    vcpu varchar,
    gpu varchar,
    publication_date varchar,
    term_type varchar,                -- OnDemand | Reserved
    offer_term_code varchar,
    lease_contract_length varchar,
    purchase_option varchar,
    offering_class varchar,
    rate_code varchar,
    unit varchar,                     -- Hrs | Quantity (upfront fee)
    price_text varchar,
    price_usd double,                 -- price_text as a number, in `currency` (USD, or the row is quarantined)
    description varchar,
    currency varchar                  -- the offer file's Currency; USD for the Price List API (pricePerUnit.USD)
);
