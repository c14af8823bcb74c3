-- Grain: one row per accelerator x precision it has a published peak for. A precision without a published
-- peak (FACTS "—") is a precision the chip cannot be priced at: candidates at it are excluded, with the reason.
with accelerators as (
    select * from catalog.accelerators
),

unpivoted as (
    unpivot accelerators
    on peak_tflops_bf16 as 'bf16', peak_tflops_fp16 as 'fp16', peak_tflops_fp8 as 'fp8',
       peak_tflops_int8 as 'int8', peak_tflops_fp4 as 'fp4', peak_tflops_int4 as 'int4'
    into name precision value peak_tflops
),

final as (
    select accelerator_id, precision, cast(peak_tflops as double) as peak_tflops
    from unpivoted
    where peak_tflops is not null
)

select * from final
