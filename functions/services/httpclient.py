"""httpx clients for the query path, sharing one TLS context (each costs ~0.1 s to build)."""

from __future__ import annotations

from functools import lru_cache

import httpx


@lru_cache(maxsize=1)
def tls_context():
    """The verifying TLS context every client shares: certifi's CA bundle, loaded once."""
    import ssl

    import certifi

    return ssl.create_default_context(cafile=certifi.where())


def make_client(base_url: str, **kwargs) -> httpx.Client:
    """A client for base_url; plain-http URLs (a local server, a test fake) skip TLS setup."""
    verify = tls_context() if base_url.lower().startswith("https:") else False
    return httpx.Client(verify=verify, **kwargs)
