"""Lambda `selection`: POST /selection; never imports Qdrant or embedding code."""

import os

from mangum import Mangum

from functions.api.app import create_app
from functions.api.deps import Deps

deps = Deps.from_env()
if os.environ.get("AWS_LAMBDA_FUNCTION_NAME"):  # on Lambda: init builds what requests use
    deps.warm("selection")
handler = Mangum(create_app(deps, "selection", threaded=False), lifespan="off")
