-- Fails when a GCP price component in catalogs/instances.yaml matches no SKU landed this run (a typo in
-- `sku_description_prefix`, or a SKU renamed upstream): every offer of that instance would silently go unpriced.
-- Checked only when the run landed GCP prices at all.
select components.instance_type, components.sku_description_prefix
from catalog.instance_price_components as components
where components.cloud = 'gcp'
    and exists (select 1 from staging.stg_gcp_billing__skus)
    and not exists (
        select 1 from staging.stg_gcp_billing__skus as skus
        where skus.sku_prefix = components.sku_description_prefix
    )
