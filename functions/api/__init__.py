"""The HTTP edge: the Starlette app, the Lambda handlers, request validation, cross-site rules, HTTP errors and the clients a container wires up (deps); may import every other room."""
