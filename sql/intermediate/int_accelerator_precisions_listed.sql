-- Grain: one row per accelerator x precision it has a peak for. A precision without a published peak (FACTS "—")
-- is a precision the chip cannot be priced at: candidates at it are excluded, with the reason. fp16 is the one
-- exception: fp16 and bf16 are one 16-bit class (precision_class), so a chip that lists no fp16 peak runs fp16 at
-- its bf16 one (the same figure on every chip that lists both); `peak_basis` says which.
with accelerators as (
    select * from catalog.accelerators
),

unpivoted as (
    unpivot accelerators
    on peak_tflops_bf16 as 'bf16', peak_tflops_fp16 as 'fp16', peak_tflops_fp8 as 'fp8',
       peak_tflops_int8 as 'int8', peak_tflops_fp4 as 'fp4', peak_tflops_int4 as 'int4'
    into name precision value peak_tflops
),

listed as (
    select accelerator_id, precision, cast(peak_tflops as double) as peak_tflops, 'listed' as peak_basis
    from unpivoted
    where peak_tflops is not null
),

final as (
    select * from listed
    union all
    select accelerator_id, 'fp16' as precision, peak_tflops, 'the bf16 peak' as peak_basis
    from listed
    where precision = 'bf16'
        and accelerator_id not in (select accelerator_id from listed where precision = 'fp16')
)

select * from final
