"""Lambda `selection`: POST /selection; never imports Qdrant or embedding code."""

from mangum import Mangum

from functions.app import create_app
from functions.deps import Deps

handler = Mangum(create_app(Deps.from_env(), "selection", threaded=False), lifespan="off")
