"""Lambda `chat`: POST /chat, POST /feedback, GET /health (app and clients built once per container)."""

import os

# One BLAS thread for the local model (offline mode), set before numpy loads: a question's
# matrices are small, and OpenBLAS's own threads spin for a CPU a Lambda shares (one question:
# 45 ms on one thread, 850 ms with two on a busy 2-core machine; benchmarks/bench_cold_start.py).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from mangum import Mangum  # noqa: E402 - after the BLAS setting

from functions.api.app import create_app  # noqa: E402
from functions.api.deps import Deps  # noqa: E402

deps = Deps.from_env()
if os.environ.get("AWS_LAMBDA_FUNCTION_NAME"):  # on Lambda: init builds what requests use
    deps.warm("chat")
handler = Mangum(create_app(deps, "chat", threaded=False), lifespan="off")
