-- Grain: one row per GCP price component in catalogs/instances.yaml that matches no SKU landed this run (a typo
-- in `sku_description_prefix`, or a SKU renamed upstream): the offers of that instance cannot be priced. The run
-- goes on and the offers page lists them, so the catalog can be fixed. Checked only when GCP prices landed at all.
with components as (
    select * from catalog.instance_price_components where cloud = 'gcp'
),

skus as (
    select * from staging.stg_gcp_billing__skus
),

final as (
    select components.cloud, components.instance_type, components.sku_description_prefix
    from components
    where exists (select 1 from skus)
        and not exists (select 1 from skus where skus.sku_prefix = components.sku_description_prefix)
)

select * from final
