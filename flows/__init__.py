"""hweval: recurring AI-hardware evaluation, ranked by the cost of the outcome."""

import os

__version__ = "0.1.0"

# Arrow's buffers in hweval's processes (the run's, its GX and chart workers, which inherit the environment) come from
# the C library's allocator rather than Arrow's default pool (mimalloc), which kept the pages of a run's freed batches:
# about 30 MiB of the run's peak on a 1e6-row offer file, at the same speed (README, Tests and benchmark, stop 51).
# Arrow reads this when pyarrow is first imported, which hweval's modules do after this package; an
# ARROW_DEFAULT_MEMORY_POOL already set is kept.
ARROW_POOL_ENV = "ARROW_DEFAULT_MEMORY_POOL"
os.environ.setdefault(ARROW_POOL_ENV, "system")
