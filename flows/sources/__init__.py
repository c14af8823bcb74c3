"""One module per source kind; each turns its format into rows of one landed table."""

from flows.sources import (
    aws_pricing,
    azure_retail,
    benchmark_runs,
    gcp_billing,
    mlperf_inference,
    mlperf_training,
)

# kind -> (module, landed table)
SOURCE_KINDS = {
    "aws_pricing": aws_pricing,
    "azure_retail": azure_retail,
    "gcp_billing": gcp_billing,
    "mlperf_inference": mlperf_inference,
    "mlperf_training": mlperf_training,
    "benchmark_runs": benchmark_runs,
}
