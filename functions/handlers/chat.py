"""Lambda `chat`: POST /chat, POST /feedback, GET /health (app and clients built once per container)."""

from mangum import Mangum

from functions.app import create_app
from functions.deps import Deps

handler = Mangum(create_app(Deps.from_env(), "chat", threaded=False), lifespan="off")
