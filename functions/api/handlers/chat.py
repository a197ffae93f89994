"""Lambda `chat`: POST /chat, POST /feedback, GET /health (app and clients built once per container)."""

import os

from mangum import Mangum

from functions.api.app import create_app
from functions.api.deps import Deps

deps = Deps.from_env()
if os.environ.get("AWS_LAMBDA_FUNCTION_NAME"):  # on Lambda: init builds what requests use
    deps.warm("chat")
handler = Mangum(create_app(deps, "chat", threaded=False), lifespan="off")
